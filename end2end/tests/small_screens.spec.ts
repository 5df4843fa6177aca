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
    '/', '/calendar', '/bookings', '/find', '/series', '/tokens', '/settings', '/dashboard', '/reports',
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
