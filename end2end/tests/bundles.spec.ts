import { test, expect, Page } from '@playwright/test';
import { collectErrors, signIn } from './login';

// Two WASM bundles (app/src/pages/mod.rs, `pages!`): the people's pages load
// one that knows only them, the console's pages the one that knows every
// page. Moving within a bundle's pages stays in the page (no load); a link
// from a people's page to a console page loads that page from the server,
// which then hydrates with every page's bundle.

const bundleOf = (page: Page) =>
  page.evaluate(() => document.querySelector('link[rel="modulepreload"]')?.getAttribute('href') ?? '');

for (const width of [1440, 390]) {
  test(`people's pages load the people's bundle and hand console pages to the server at ${width} px`, async ({ browser }) => {
    const context = await browser.newContext({ timezoneId: 'Europe/Berlin', viewport: { width, height: 900 } });
    const page = await context.newPage();
    await signIn(page, 'root');
    const errors = collectErrors(page);
    await page.goto('/calendar');
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    expect(await bundleOf(page)).toMatch(/^\/pkg\/berth-people\.[0-9a-f]{16}\.js$/);
    // Within the people's pages the router moves without loading a page.
    await page.evaluate(() => { (window as any).stayed = true; });
    if (width === 390) await page.locator('label.menu-button').click();
    await page.locator('nav.account a[href="/bookings"]').click();
    await expect(page).toHaveURL(/\/bookings$/);
    await expect(page.getByRole('heading', { level: 1, name: 'My bookings' })).toBeVisible();
    expect(await page.evaluate(() => (window as any).stayed)).toBe(true);

    // A console page: the server renders it, with every page's bundle.
    if (width === 390) await page.locator('label.menu-button').click();
    await page.locator('#admin-menu').click();
    await page.locator('#admin-nav').click();
    await expect(page).toHaveURL(/\/admin\/users$/);
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    await expect(page.getByRole('heading', { level: 1, name: 'Users' })).toBeVisible();
    expect(await page.evaluate(() => (window as any).stayed)).toBeUndefined();
    expect(await bundleOf(page)).toMatch(/^\/pkg\/berth\.[0-9a-f]{16}\.js$/);

    // Every page's bundle knows the calendar: back there without a load.
    await page.evaluate(() => { (window as any).stayed = true; });
    if (width === 390) await page.locator('label.menu-button').click();
    await page.locator('nav.account a[href="/calendar"]').click();
    await expect(page).toHaveURL(/\/calendar$/);
    await expect(page.locator('.calendar-layout')).toBeVisible();
    expect(await page.evaluate(() => (window as any).stayed)).toBe(true);

    // History goes back the same way: to the console page, then to the
    // people's page the server rendered with the people's bundle.
    await page.goBack();
    await expect(page).toHaveURL(/\/admin\/users$/);
    await expect(page.getByRole('heading', { level: 1, name: 'Users' })).toBeVisible();
    await page.goBack();
    await expect(page).toHaveURL(/\/bookings$/);
    await expect(page.getByRole('heading', { level: 1, name: 'My bookings' })).toBeVisible();
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    expect(errors).toEqual([]);
    await context.close();
  });
}

test('the server sends each bundle it links, precompressed', async ({ request }) => {
  for (const path of ['/signin', '/admin/users']) {
    const html = await (await request.get(path)).text();
    const wasm = html.match(/\/pkg\/berth(-people)?\.[0-9a-f]{16}\.wasm/)?.[0];
    expect(wasm, path).toBeTruthy();
    expect(wasm!.includes('people'), path).toBe(path === '/signin');
    const answer = await request.get(wasm!, { headers: { 'Accept-Encoding': 'br' } });
    expect(answer.status()).toBe(200);
    expect(answer.headers()['content-type']).toBe('application/wasm');
    expect(answer.headers()['content-encoding']).toBe('br');
  }
});
