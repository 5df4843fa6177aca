import { test, expect, Browser } from '@playwright/test';
import { bookLab, collectErrors, signIn, slot } from './login';

// Work outlives the window (issue 46), as a person meets it in a non-UTC
// zone at 1440 and 390 px: a live card counts down to its end, offers one
// more step ("+15 min" in lab-h100), and says what is kept and what ends;
// the End-now dialog says it too; Settings shows the home and model cache;
// admins get the Homes page.

const quarter = 15 * 60 * 1000;

async function context(browser: Browser, width: number) {
  return browser.newContext({ timezoneId: 'Europe/Berlin', viewport: { width, height: 900 } });
}

for (const width of [1440, 390]) {
  test(`at ${width} px a live card counts down, offers +15 min and says what outlives the window`, async ({ browser }) => {
    const ctx = await context(browser, width);
    const page = await ctx.newPage();
    const errors = collectErrors(page);
    await signIn(page, 'ada');
    const { booking } = await bookLab(page, 0, 2);
    await page.goto(`/bookings/${booking.id}`);
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    const card = page.locator(`#booking-${booking.id}`);
    await expect(card.locator('.countdown')).toContainText(/ends in \d+ min/);
    const end = new Date(booking.end).toLocaleTimeString('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit' });
    await expect(card.locator('.persistence')).toContainText(
      `Your home (/home/jovyan) and model cache (/models) are kept until`);
    await expect(card.locator('.persistence')).toContainText(
      `; everything else in this session ends at ${end}.`);

    // One more step: the end moves by the pool's 15 minutes.
    await card.getByRole('button', { name: 'Extend by 15 min' }).click();
    const later = new Date(new Date(booking.end).getTime() + quarter);
    await expect.poll(async () => (await (await page.request.get(`/api/v1/bookings/${booking.id}`)).json()).end)
      .toBe(later.toISOString().replace('.000Z', 'Z'));
    const laterText = later.toLocaleTimeString('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit' });
    await expect(card.locator('.persistence')).toContainText(`ends at ${laterText}.`);

    await card.getByRole('button', { name: 'End now', exact: true }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText('Your home (/home/jovyan) and model cache (/models) are kept until');
    await expect(dialog).toContainText('the workspace and everything else in its namespace are deleted now');
    await dialog.getByRole('button', { name: 'Yes, end now' }).click();
    await expect(page.locator('#notice')).toContainText('Ended');
    await expect(card.locator('.persistence')).toHaveCount(0);

    await page.goto('/settings');
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    await expect(page.getByRole('heading', { name: 'Your home and model cache' })).toBeVisible();
    expect(errors).toEqual([]);
    await ctx.close();
  });
}

test('admins see every home and set a tenant\'s home and model cache sizes', async ({ browser }) => {
  const ctx = await context(browser, 1440);
  const page = await ctx.newPage();
  const errors = collectErrors(page);
  await signIn(page, 'root');
  // A booking waits for approval, so the admin menu carries its count (an
  // admin's pages once failed to hydrate whenever it did).
  const origin = { Origin: new URL(page.url()).origin };
  const created = await page.request.post('/api/v1/pools', { headers: origin,
    data: { name: `approve-${Date.now()}`, requires_approval: true, kinds: [{ kind: 'nvidia.com/gpu', capacity: 1 }] } });
  expect(created.status(), await created.text()).toBe(201);
  const pool = await created.json();
  const ada = await (await context(browser, 1440)).newPage();
  await signIn(ada, 'ada');
  const waiting = await ada.request.post('/api/v1/bookings', { headers: { Origin: new URL(ada.url()).origin },
    data: { pool_id: pool.id, kind: 'nvidia.com/gpu', quantity: 1, mode: 'interactive', start: slot(96), end: slot(100) } });
  expect(waiting.status(), await waiting.text()).toBe(201);
  expect((await waiting.json()).state).toBe('pending');
  await page.goto('/admin/homes');
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
  await expect(page.getByRole('heading', { name: 'Homes', exact: true })).toBeVisible();
  // (A refused size is a 422 with the field named: server/tests/it/homes.rs.)
  const size = page.locator('input[name="home_gib"]').first();
  await size.fill('80');
  await page.locator('input[name="cache_gib"]').first().fill('250');
  await page.getByRole('button', { name: /^Save homes, / }).first().click();
  await expect(page.locator('#notice')).toHaveText(/^Saved the homes of [a-z0-9-]+\.$/);
  await page.reload();
  await expect(page.locator('input[name="home_gib"]').first()).toHaveValue('80');
  await expect(page.locator('input[name="cache_gib"]').first()).toHaveValue('250');
  await expect(page.locator('select[name="cache_kept"]').first()).toHaveValue('kept');
  expect(errors).toEqual([]);
  await ctx.close();
});
