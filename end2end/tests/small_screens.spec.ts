import { test, expect, Page } from '@playwright/test';
import { signIn } from './login';

// Every page fits a 390 px phone without sideways scrolling (wide tables
// and the calendar scroll inside their own box), the header stays small
// there, and the admin's navigation is one line at 1440 px.

async function pages(page: Page): Promise<string[]> {
  const pools = await (await page.request.get('/api/v1/pools')).json();
  const lab = pools.find((p: { name: string }) => p.name === 'lab-h100');
  const mine = await (await page.request.get('/api/v1/bookings')).json();
  const paths = [
    '/', '/calendar', '/bookings', '/find', '/fit', '/free', '/series', '/tokens', '/settings', '/dashboard', '/reports',
    '/reports/tokenomics', '/admin/users', '/admin/pools', `/admin/pools/${lab.id}`, '/admin/tenants',
    '/admin/homes', '/admin/approvals', '/admin/waitlist', '/admin/audit', '/admin/worker',
  ];
  const booking = (Array.isArray(mine) ? mine : mine.bookings ?? [])[0];
  if (booking) paths.push(`/bookings/${booking.id}`, `/bookings/${booking.id}/manifests`);
  return paths;
}

async function overflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

test('every page fits 390 px without sideways scrolling; the header takes little of it', async ({ browser }) => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  await page.goto('/signin');
  expect(await overflow(page), '/signin').toBeLessThanOrEqual(0);
  await signIn(page, 'root');
  const wide: string[] = [];
  for (const path of await pages(page)) {
    await page.goto(path);
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    const extra = await overflow(page);
    if (extra > 0) {
      wide.push(`${path} (+${extra} px)`);
      await page.screenshot({ path: `test-results/narrow${path.replace(/\//g, '_')}.png`, fullPage: true });
    }
  }
  expect(wide, 'pages wider than 390 px').toEqual([]);

  // The header: one compact row until the menu is opened.
  await page.goto('/bookings');
  const header = await page.locator('header.topbar').boundingBox();
  expect(header!.height).toBeLessThan(844 / 8);
  await expect(page.getByRole('link', { name: 'Calendar' })).toBeHidden();
  await page.locator('label.menu-button').click();
  await page.getByRole('link', { name: 'Calendar' }).click();
  await expect(page).toHaveURL(/\/calendar/);
  await context.close();
});

test("the admin's navigation is one line at 1440 px", async ({ browser }) => {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  await signIn(page, 'root');
  const links = page.locator('header nav.account > a, header nav.account > details > summary, #who, #logout');
  // One row: every item's vertical middle within a few pixels of the others'.
  const middles = await links.evaluateAll((els) => els.map((e) => {
    const box = e.getBoundingClientRect();
    return box.top + box.height / 2;
  }));
  expect(middles.length).toBeGreaterThan(10);
  expect(Math.max(...middles) - Math.min(...middles), `middles ${middles}`).toBeLessThan(8);
  await context.close();
});

// On a phone, My bookings is a compact list (each booking's steps, sharing
// and actions on its own page), and Approvals shows each request's pool,
// window and busiest moment on screen, not in columns off to the side.
test('on a phone My bookings is a compact list and Approvals shows pool, window and peak', async ({ browser }) => {
  const phone = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, timezoneId: 'Europe/Berlin' };
  const ada = await (await browser.newContext(phone)).newPage();
  await signIn(ada, 'ada');
  const origin = { Origin: new URL(ada.url()).origin };
  const root = await (await browser.newContext(phone)).newPage();
  await signIn(root, 'root');
  const pool = await (await root.request.post('/api/v1/pools', { headers: { Origin: origin.Origin },
    data: { name: `phone-${Date.now()}`, requires_approval: true, kinds: [{ kind: 'nvidia.com/gpu', capacity: 1 }] } })).json();
  const start = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 50 * 3_600_000);
  for (const [id, hours] of [[pool.id, 2], [null, 1]] as const) {
    const lab = (await (await ada.request.get('/api/v1/pools')).json()).find((p: { name: string }) => p.name === 'lab-h100');
    const made = await ada.request.post('/api/v1/bookings', { headers: origin, data: { pool_id: id ?? lab.id,
      kind: id ? 'nvidia.com/gpu' : 'nvidia.com/mig-1g.24gb', quantity: 1, mode: 'interactive',
      start: start.toISOString(), end: new Date(start.getTime() + hours * 3_600_000).toISOString() } });
    expect(made.status(), await made.text()).toBe(201);
  }

  await ada.goto('/bookings');
  await expect(ada.locator('main[data-hydrated="true"]')).toBeAttached();
  const card = ada.locator('.cards.compact article.booking-card').first();
  await expect(card.locator('.card-open')).toBeVisible();
  await expect(card.locator('.card-actions')).toBeHidden();
  await card.locator('.card-open').click();
  await expect(ada).toHaveURL(/\/bookings\/[0-9a-f-]{36}$/);
  await expect(ada.locator('article.booking-card .card-actions')).toBeVisible();
  await expect(ada.locator('article.booking-card .card-open')).toBeHidden();

  await root.goto('/admin/approvals');
  await expect(root.locator('main[data-hydrated="true"]')).toBeAttached();
  const request = root.locator('#approval-list tbody tr', { hasText: pool.name });
  for (const label of ['Pool', 'Window', 'Busiest moment']) {
    const cell = request.locator(`td[data-label^="${label}"]`);
    // Scrolled to, it is on screen whole: no column lies off to the side.
    await cell.scrollIntoViewIfNeeded();
    await expect(cell).toBeInViewport({ ratio: 0.9 });
    const box = (await cell.boundingBox())!;
    expect(box.x + box.width, label).toBeLessThanOrEqual(390);
  }
  await expect(request.locator('td[data-label="Pool"]')).toContainText(pool.name);
  await expect(request.locator('td[data-label^="Busiest moment"]')).toContainText('with this request');
  await root.request.delete(`/api/v1/pools/${pool.id}`, { headers: origin }).catch(() => undefined);
  await ada.context().close();
  await root.context().close();
});
