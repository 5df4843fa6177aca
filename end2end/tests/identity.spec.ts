import { test, expect } from '@playwright/test';
import { collectErrors, signIn, signOut } from './login';

test('sign in through the provider, see name, role and tenant; sign out; an admin sees admin navigation', async ({ page }) => {
  const errors = collectErrors(page);
  await page.goto('/');
  await expect(page.locator('#welcome-signin')).toBeVisible();

  await signIn(page, 'mia');
  await expect(page).toHaveURL(/127\.0\.0\.1:\d+\/$/);
  await expect(page.locator('#who-name')).toHaveText('Mia Manager');
  await expect(page.locator('#who-role')).toHaveText('manager');
  await expect(page.locator('#who-tenants')).toHaveText('a');
  await expect(page.getByRole('heading', { name: 'lab-h100' })).toBeVisible();
  await expect(page.locator('#admin-nav')).toHaveCount(0);

  await signOut(page);
  expect((await page.request.get('/api/v1/me')).status()).toBe(401);

  await signIn(page, 'root');
  await expect(page.locator('#who-role')).toHaveText('admin');
  await page.locator('#admin-menu').click();
  await page.locator('#admin-nav').click();
  await expect(page.getByRole('heading', { name: 'Users' })).toBeVisible();
  const mia = page.locator('#user-list tr', { hasText: 'mia@example.test' });
  await expect(mia).toContainText('(from group)');
  // An existing tenant only ('ops', made by global-setup).
  await mia.getByLabel('Tenant for mia@example.test').fill('ops');
  await mia.getByRole('button', { name: 'Add' }).click();
  await expect(mia.locator('code', { hasText: 'ops' })).toBeVisible();
  expect(errors).toEqual([]);
});

test('a user without a tenant is asked to see an admin', async ({ page }) => {
  await signIn(page, 'nobody');
  await expect(page.locator('#ask-your-admin')).toBeVisible();
  await expect(page.locator('#who-tenants')).toHaveText('no tenant');
});

test('tokens: created and shown once, listed with last use, revoked', async ({ page }) => {
  const errors = collectErrors(page);
  await signIn(page, 'ada');
  await page.getByRole('link', { name: 'Tokens' }).click();
  await expect(page.getByRole('heading', { name: 'API tokens' })).toBeVisible();
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
  await page.getByLabel('Name').fill('notebook');
  await page.getByLabel('Expires in (days)').fill('7');
  await page.getByRole('button', { name: 'Create token' }).click();
  const token = (await page.locator('#new-token').textContent())!.trim();
  expect(token).toMatch(/^berth_[0-9a-f]{64}$/);
  const row = page.locator('#token-list tr', { hasText: 'notebook' });
  await expect(row).toContainText('never');

  const api = await page.request.get('/api/v1/me', { headers: { Authorization: `Bearer ${token}` } });
  expect(api.status()).toBe(200);
  expect((await api.json()).email).toBe('ada@example.test');

  await page.reload();
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
  await expect(page.locator('#new-token')).toHaveCount(0);
  await expect(row).not.toContainText('never');
  await row.getByRole('button', { name: 'Revoke notebook' }).click();
  await expect(row).toContainText('revoked');
  const after = await page.request.get('/api/v1/me', { headers: { Authorization: `Bearer ${token}` } });
  expect(after.status()).toBe(401);
  expect(errors).toEqual([]);
});

test('a form on another origin cannot use the session (CSRF)', async ({ page }) => {
  await signIn(page, 'ada');
  const portal = new URL(page.url()).origin;
  // Another origin on the same host: the browser sends the Lax cookie along,
  // so only the portal's origin check stands in the way.
  const evil = 'http://127.0.0.1:4499';
  await page.route(`${evil}/**`, (route) => route.fulfill({
    contentType: 'text/html',
    body: `<form id="f" method="post" action="${portal}/rpc/tokens/create">
             <input name="name" value="planted"><input name="expires_in_days" value="30"></form>
           <script>document.getElementById('f').submit()</script>`,
  }));
  const answer = page.waitForResponse((r) => r.url().startsWith(`${portal}/rpc/tokens/create`));
  await page.goto(`${evil}/page.html`);
  expect((await answer).status()).toBe(403);

  await page.goto('/tokens');
  await expect(page.getByRole('heading', { name: 'API tokens' })).toBeVisible();
  await expect(page.locator('#token-list', { hasText: 'planted' })).toHaveCount(0);
});

/// A sign-in that Berth refuses (no session follows). With `login`, through
/// the provider's form; without, on the provider session the browser still has.
async function signInRefused(page: import('@playwright/test').Page, login?: string) {
  await page.goto('/signin');
  await page.getByRole('link', { name: 'Sign in with single sign-on' }).click();
  if (login) {
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('any');
    await page.getByRole('button', { name: 'Sign-in' }).click();
  }
}

test('an unverified email address is refused with a page that says why', async ({ page }) => {
  await signInRefused(page, 'eve');
  await expect(page.getByRole('alert')).toContainText('has not verified');
  expect((await page.request.get('/api/v1/me')).status()).toBe(401);
});

test('an admin disables a user: their open page loses the session at once and their next login is refused', async ({ browser, page }) => {
  const bobContext = await browser.newContext();
  const bob = await bobContext.newPage();
  await signIn(bob, 'bob');
  expect((await bob.request.get('/api/v1/me')).status()).toBe(200);

  const errors = collectErrors(page);
  await signIn(page, 'root');
  await page.locator('#admin-menu').click();
  await page.locator('#admin-nav').click();
  const row = page.locator('#user-list tr', { hasText: 'bob@example.test' });
  await row.getByLabel('Reason to disable bob@example.test').fill('left the lab');
  await row.getByRole('button', { name: 'Disable bob@example.test' }).click();
  await expect(row).toContainText('disabled');
  await expect(row).toContainText('left the lab');

  expect((await bob.request.get('/api/v1/me')).status()).toBe(401);
  await bob.reload();
  await expect(bob.locator('#who-name')).toHaveCount(0);
  await signInRefused(bob);
  await expect(bob.getByRole('alert')).toContainText('disabled');

  await row.getByRole('button', { name: 'Enable bob@example.test' }).click();
  await expect(row).not.toContainText('disabled');
  await bobContext.close();
  expect(errors).toEqual([]);
});
