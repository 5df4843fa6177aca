import { test, expect, Browser, Page } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { readFileSync } from 'node:fs';
import { signIn } from './login';

// Every page, for every role, hydrated and without JavaScript: axe-core
// finds no violation of impact moderate or higher (WCAG 2.1 A and AA rules
// and axe's best practices), and each page has its own <title>.

const everyone: [string, string][] = [
  ['/', 'Pools and bookings'],
  ['/calendar', 'Calendar'],
  ['/bookings', 'My bookings'],
  ['/find', 'Find a slot'],
  ['/fit', 'Which kind fits my model?'],
  ['/free', 'What is free then'],
  ['/series', 'Book a recurring slot'],
  ['/tokens', 'API tokens'],
  ['/settings', 'Settings'],
  ['/dashboard', 'Dashboard'],
  ['/no-such-page', 'Page not found'],
];
const readers: [string, string][] = [
  ['/reports', 'Reports'],
  ['/reports/tokenomics', 'Tokenomics'],
];
const admins: [string, string][] = [
  ['/admin/users', 'Users'],
  ['/admin/pools', 'Manage pools'],
  ['/admin/clusters', 'Clusters'],
  ['/admin/tenants', 'Tenants and quotas'],
  ['/admin/approvals', 'Approvals'],
  ['/admin/audit', 'Audit log'],
  ['/admin/worker', 'Worker'],
];
const roles: [string, [string, string][]][] = [
  ['ada', everyone],
  ['mia', [...everyone, ...readers]],
  ['root', [...everyone, ...readers, ...admins]],
];

const blocking = new Set(['moderate', 'serious', 'critical']);

async function violations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'])
    .analyze();
  return results.violations
    .filter((v) => blocking.has(v.impact ?? ''))
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`
      + (v.nodes.length > 3 ? ` and ${v.nodes.length - 3} more` : ''));
}

// axe runs as a script in the page, so "without JavaScript" is the page as
// the server rendered it with the portal's own scripts refused (hydration
// never starts), rather than a context with scripts switched off.
async function signedIn(browser: Browser, login: string, js: boolean): Promise<Page> {
  const context = await browser.newContext();
  if (!js) await context.route(/\/pkg\/.*\.(js|wasm)$/, (route) => route.abort());
  const page = await context.newPage();
  await signIn(page, login, js);
  return page;
}

for (const js of [true, false]) {
  for (const [login, pages] of roles) {
    test(`${login}'s pages ${js ? 'hydrated' : 'without JavaScript'}: own titles, no axe violations`, async ({ browser }) => {
      test.setTimeout(180_000);
      const page = await signedIn(browser, login, js);
      const found: string[] = [];
      for (const [path, title] of pages) {
        await page.goto(path);
        if (js) await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
        else await expect(page.locator('main[data-hydrated="false"]')).toBeAttached();
        await expect(page).toHaveTitle(`${title} — Berth`);
        for (const v of await violations(page)) found.push(`${path}: ${v}`);
      }
      // The manifests page of a booking the role may see: its own, made
      // through the API with the browser's session, or (root, an admin in no
      // tenant) the token user's. A distinct hour per test, three weeks
      // ahead, in the demo pool.
      const hour = 3600_000;
      const offset = roles.findIndex(([l]) => l === login) + (js ? 0 : roles.length);
      const start = new Date(Math.ceil(Date.now() / hour) * hour + (21 * 24 + offset) * hour);
      const pools = await (await page.request.get('/api/v1/pools')).json();
      const lab = pools.find((p: { name: string }) => p.name === 'lab-h100');
      const created = await page.request.post('/api/v1/bookings', {
        headers: {
          Origin: new URL(page.url()).origin,
          ...(login === 'root' ? { Authorization: `Bearer ${readFileSync('test-results-token.txt', 'utf8').trim()}` } : {}),
        },
        data: {
          pool_id: lab.id, kind: 'nvidia.com/mig-1g.24gb', quantity: 1, mode: 'interactive',
          start: start.toISOString(), end: new Date(start.getTime() + hour).toISOString(),
        },
      });
      expect(created.status(), await created.text()).toBe(201);
      const manifests = `/bookings/${(await created.json()).id}/manifests`;
      await page.goto(manifests);
      await expect(page.locator(`main[data-hydrated="${js}"]`)).toBeAttached();
      await expect(page).toHaveTitle('What the worker applies — Berth');
      await expect(page.locator('#manifests')).toContainText('"kind": "ResourceQuota"');
      for (const v of await violations(page)) found.push(`${manifests}: ${v}`);
      if (login === 'root') {
        // A pool's own settings page, reached from the list.
        await page.goto('/admin/pools');
        const href = await page.locator('a[href^="/admin/pools/"]').first().getAttribute('href');
        await page.goto(href!);
        if (js) await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
        await expect(page).toHaveTitle('Pool settings — Berth');
        for (const v of await violations(page)) found.push(`${href}: ${v}`);
      }
      expect(found, found.join('\n')).toEqual([]);
      await page.context().close();
    });
  }
}

test('the sign-in page without an account: own title, no axe violations', async ({ page }) => {
  await page.goto('/signin');
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
  await expect(page).toHaveTitle('Sign in — Berth');
  expect(await violations(page)).toEqual([]);
});

test('the checker itself reports a broken page', async ({ page }) => {
  // Shows the filter and tags above let real violations through.
  await page.setContent('<html><body><img src="/x.png"><a href="/"></a></body></html>');
  const found = await violations(page);
  expect(found.some((v) => v.startsWith('image-alt (critical)')), found.join('\n')).toBe(true);
  expect(found.some((v) => v.startsWith('link-name (serious)')), found.join('\n')).toBe(true);
});
