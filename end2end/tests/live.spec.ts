import { test, expect, Browser, Page } from '@playwright/test';
import { collectErrors, signIn } from './login';

// Open pages follow what happens elsewhere without a reload: another
// person's decision, the worker's progress, the admins' badge.

async function as(browser: Browser, login: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await signIn(page, login);
  return page;
}

/// A REST call with the browser's login (the portal's origin, as a page sends it).
async function api(page: Page, path: string, data: object) {
  const answer = await page.request.post(path, { headers: { Origin: new URL(page.url()).origin }, data });
  expect(answer.ok(), `${path}: ${answer.status()} ${await answer.text()}`).toBe(true);
  return answer.json();
}

const quarter = 15 * 60 * 1000;
const slot = (n: number) => new Date((Math.floor(Date.now() / quarter) + n) * quarter).toISOString();

// Open pages poll every 4 s (app/src/pages/live.rs) and then fetch what
// moved: a change shows within two polls, not within the default 5 s (one
// poll plus a refetch on a loaded machine once took longer than that).
const polled = { timeout: 10_000 };

async function badge(page: Page): Promise<number> {
  const count = page.locator('#approvals-count');
  return (await count.count()) ? Number(await count.textContent()) : 0;
}

test('my bookings and the approvals badge change without a reload, and a workspace becoming ready is announced', async ({ browser }) => {
  const root = await as(browser, 'root');
  const ada = await as(browser, 'ada');
  const errors = [...collectErrors(ada), ...collectErrors(root)];
  const pool = await api(root, '/api/v1/pools', {
    name: `live-${Date.now()}`, requires_approval: true,
    kinds: [{ kind: 'nvidia.com/gpu', capacity: 2 }],
  });
  await ada.goto('/bookings?tz=UTC');
  await expect(ada.locator('main[data-hydrated="true"]')).toBeAttached();
  await ada.evaluate(() => { (window as any).sameDocument = true; });
  const waiting = await badge(root);

  // Booked elsewhere (a script, another tab): the card appears, pending.
  const booked = await api(ada, '/api/v1/bookings', {
    pool_id: pool.id, kind: 'nvidia.com/gpu', quantity: 1, mode: 'interactive', start: slot(96), end: slot(100),
  });
  const card = ada.locator(`#upcoming #booking-${booked.id}`);
  await expect(card.locator('.badge')).toHaveText('pending', polled);
  await expect(root.locator('#approvals-count')).toHaveText(String(waiting + 1), polled);

  // The admin approves: the card says so, and the badge drops back.
  await api(root, `/api/v1/bookings/${booked.id}/approve`, { comment: 'ok' });
  await expect(card.locator('.badge')).toHaveText('approved', polled);
  if (waiting === 0) await expect(root.locator('#approvals-count')).toHaveCount(0, polled);
  else await expect(root.locator('#approvals-count')).toHaveText(String(waiting), polled);

  // A window opening now: the worker provisions it and the page says it is ready.
  const lab = (await (await ada.request.get('/api/v1/pools')).json()).find((p: { name: string }) => p.name === 'lab-h100');
  const now = await api(ada, '/api/v1/bookings', {
    pool_id: lab.id, kind: 'nvidia.com/mig-1g.24gb', quantity: 1, mode: 'interactive', start: slot(0), end: slot(2),
  });
  await expect(ada.locator(`#live #booking-${now.id} .badge`)).toHaveText('active', { timeout: 30_000 });
  await expect(ada.locator('#ready-notice')).toContainText('Your workspace on lab-h100 is ready', { timeout: 30_000 });

  expect(await ada.evaluate(() => (window as any).sameDocument)).toBe(true);

  // No workspace runs on the simulated cluster: Open workspace says so plainly.
  await ada.locator(`#booking-${now.id}`).getByRole('link', { name: 'Open workspace (simulated)' }).click();
  await expect(ada.getByRole('heading', { name: 'No workspace runs: this is a simulated cluster' })).toBeVisible();
  await expect(ada.locator('#simulated-workspace code')).toHaveText(/^https:\/\/berth-[a-z0-9-]+\.berth\.local\/?$/);
  // In the site's frame: the booking's own page, with the navigation, answered 200.
  await expect(ada).toHaveURL(new RegExp(`/bookings/${now.id}\\?opened=simulated$`));
  await expect(ada.locator('#who-name')).toBeVisible();
  await expect(ada.locator(`#booking-${now.id}`)).toBeVisible();
  const opened = await ada.request.get(`/bookings/${now.id}/open`, { headers: { Accept: 'text/html' }, maxRedirects: 0 });
  expect(opened.status()).toBe(303);
  expect((await ada.request.get(opened.headers()['location'])).status()).toBe(200);
  await api(ada, `/api/v1/bookings/${now.id}/end`, {});
  expect(errors).toEqual([]);
});
