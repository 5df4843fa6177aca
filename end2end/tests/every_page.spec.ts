import { test, expect, Browser } from '@playwright/test';
import { bookLab, collectErrors, signIn, slot } from './login';

// Every page each role may open, at 1440 and 390 px, in a non-UTC zone,
// while a booking waits for approval (the admin menu then carries a count):
// no console error, no hydration warning, nothing wider than the screen.

const user = ['/', '/calendar', '/bookings', '/find', '/fit', '/free', '/series', '/tokens', '/settings', '/dashboard'];
const manager = [...user, '/reports', '/reports/tokenomics'];
const admin = [
  ...manager, '/admin/users', '/admin/pools', '/admin/clusters', '/admin/tenants', '/admin/homes', '/admin/approvals',
  '/admin/waitlist', '/admin/audit', '/admin/worker',
];
const roles: [string, string[]][] = [['ada', user], ['mia', manager], ['root', admin]];

async function aBookingWaits(browser: Browser) {
  const root = await (await browser.newContext()).newPage();
  await signIn(root, 'root');
  const created = await root.request.post('/api/v1/pools', { headers: { Origin: new URL(root.url()).origin },
    data: { name: `waits-${Date.now()}`, requires_approval: true, kinds: [{ kind: 'nvidia.com/gpu', capacity: 1 }] } });
  expect(created.status(), await created.text()).toBe(201);
  const pool = await created.json();
  const ada = await (await browser.newContext()).newPage();
  await signIn(ada, 'ada');
  const waiting = await ada.request.post('/api/v1/bookings', { headers: { Origin: new URL(ada.url()).origin },
    data: { pool_id: pool.id, kind: 'nvidia.com/gpu', quantity: 1, mode: 'interactive', start: slot(96), end: slot(100) } });
  expect(waiting.status(), await waiting.text()).toBe(201);
  // A booking of hers, so that its own pages are there to visit.
  return (await bookLab(ada, 8, 10)).booking.id as string;
}

for (const width of [1440, 390]) {
  test(`every page of every role hydrates cleanly and fits at ${width} px`, async ({ browser }) => {
    const booking = await aBookingWaits(browser);
    for (const [login, paths] of roles) {
      const context = await browser.newContext({ timezoneId: 'Europe/Berlin', viewport: { width, height: 900 } });
      const page = await context.newPage();
      await signIn(page, login);
      const errors = collectErrors(page);
      const wide: string[] = [];
      const visits = login === 'ada' ? [...paths, `/bookings/${booking}`, `/bookings/${booking}/manifests`] : paths;
      for (const path of visits) {
        await page.goto(path);
        await expect(page.locator('main[data-hydrated="true"]'), `${login} ${path}`).toBeAttached();
        const extra = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        if (extra > 0) wide.push(`${path} (+${extra} px)`);
      }
      expect(errors, `${login} at ${width} px`).toEqual([]);
      expect(wide, `${login}: pages wider than ${width} px`).toEqual([]);
      await context.close();
    }
  });
}
