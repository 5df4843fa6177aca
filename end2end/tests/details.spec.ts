import { test, expect } from '@playwright/test';
import { signIn } from './login';

// Small things a person notices: text that cannot be read, a form field
// that checks nothing.

test("the header's Sign in reads: its text is not the colour of its background", async ({ page }) => {
  await page.goto('/');
  const link = page.locator('header nav.account a', { hasText: 'Sign in' });
  const [color, background] = await link.evaluate((el) => {
    const style = getComputedStyle(el);
    return [style.color, style.backgroundColor];
  });
  expect(color).not.toBe(background);
});

test('the tenant slug field checks its pattern in Chromium', async ({ page }) => {
  await signIn(page, 'root');
  await page.goto('/admin/tenants');
  const slug = page.locator('input[name="slug"]').first();
  await slug.fill('Not A Slug');
  expect(await slug.evaluate((el: HTMLInputElement) => el.validity.patternMismatch)).toBe(true);
  await slug.fill('team-x2');
  expect(await slug.evaluate((el: HTMLInputElement) => el.validity.valid)).toBe(true);
});

test('every page says the cluster is simulated when it is: home, calendar, bookings, dashboard', async ({ page }) => {
  await signIn(page, 'ada');
  for (const path of ['/', '/calendar', '/bookings', '/dashboard']) {
    await page.goto(path);
    await expect(page.locator('#simulated-badge'), path).toHaveText('Simulated cluster');
  }
  // An upcoming card says what will (not) happen at its start.
  const lab = (await (await page.request.get('/api/v1/pools')).json()).find((p: { name: string }) => p.name === 'lab-h100');
  const hour = 3600 * 1000;
  const start = new Date((Math.floor(Date.now() / hour) + 5 * 24 + 3) * hour);
  const origin = { Origin: new URL(page.url()).origin };
  const answer = await page.request.post('/api/v1/bookings', {
    headers: origin,
    data: { pool_id: lab.id, kind: 'nvidia.com/mig-1g.24gb', quantity: 1, mode: 'interactive',
      start: start.toISOString(), end: new Date(start.getTime() + hour).toISOString() },
  });
  expect(answer.status(), await answer.text()).toBe(201);
  const booking = await answer.json();
  await page.goto('/bookings');
  await expect(page.locator(`#upcoming #booking-${booking.id} .workspace`))
    .toHaveText('When the window starts, the worker creates its namespace and objects on the simulated cluster: no workspace will run.');
  await page.request.post(`/api/v1/bookings/${booking.id}/cancel`, { headers: origin, data: {} });
});

test("a person's zone is learnt from their browser until they choose one in Settings, and every page then uses it", async ({ browser }) => {
  const context = await browser.newContext({ timezoneId: 'Asia/Tokyo' });
  const page = await context.newPage();
  const login = `tz-${Date.now()}`;
  await signIn(page, login);
  const zone = async () => (await (await page.request.get('/api/v1/me/time-zone')).json()).time_zone;
  await expect.poll(zone).toBe('Asia/Tokyo');
  await page.goto('/settings');
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
  await expect(page.locator('#time-zone')).toHaveValue('Asia/Tokyo');
  await page.locator('#time-zone').selectOption('Europe/Lisbon');
  await page.getByRole('button', { name: 'Save zone' }).click();
  await expect(page.locator('#notice')).toHaveText('Times on these pages, in mails, your calendar feed and the CLI are now in Europe/Lisbon.');
  expect(await zone()).toBe('Europe/Lisbon');
  // A later visit from another zone does not undo the choice.
  await page.reload();
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
  expect(await zone()).toBe('Europe/Lisbon');
  await context.close();
  // A browser in yet another zone, never seen before: pages are in Lisbon
  // from the first byte and stay so once hydrated.
  const elsewhere = await browser.newContext({ timezoneId: 'America/New_York' });
  const away = await elsewhere.newPage();
  await signIn(away, login);
  for (const path of ['/bookings', '/calendar', '/series', '/find']) {
    await away.goto(path);
    await expect(away.locator('main[data-hydrated="true"]')).toBeAttached();
    await expect(away.locator('main'), path).toContainText('Times in Europe/Lisbon');
    await expect(away.locator('main'), path).not.toContainText('America/New_York');
  }
  await elsewhere.close();
});
