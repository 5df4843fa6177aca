import { test, expect } from '@playwright/test';
import { collectErrors, signIn } from './login';

// Settings: the secret calendar feed. The address shown is a working ICS
// feed; regenerating shows a new one and the old one stops answering.

test('a user copies a working feed address and regenerates it', async ({ page }) => {
  const errors = collectErrors(page);
  await signIn(page, 'ada');
  await page.getByRole('link', { name: 'Settings' }).click();
  await expect(page.getByRole('heading', { name: 'Calendar feed' })).toBeVisible();
  const address = page.locator('#feed-url');
  const first = await address.inputValue();
  expect(first).toMatch(/\/api\/v1\/calendar-feeds\/bcal_[0-9a-f]{64}\.ics$/);
  const feed = await page.request.get(first);
  expect(feed.status()).toBe(200);
  expect(feed.headers()['content-type']).toContain('text/calendar');
  expect(await feed.text()).toContain('BEGIN:VCALENDAR');

  await page.getByRole('button', { name: 'Regenerate the address' }).click();
  await expect(page.getByRole('status')).toHaveText(/old one no longer works/);
  await expect(address).not.toHaveValue(first);
  const second = await address.inputValue();
  expect((await page.request.get(first)).status()).toBe(404);
  expect((await page.request.get(second)).status()).toBe(200);
  expect(errors).toEqual([]);
});

// Settings: notifications. A choice saved stays saved; a webhook shows its
// signing secret once, is listed, and can be removed.
test('a user switches a notification off and adds and removes a webhook', async ({ page }) => {
  const errors = collectErrors(page);
  await signIn(page, 'ada');
  await page.goto('/settings');
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
  await expect(page.getByRole('heading', { name: 'Notifications' })).toBeVisible();
  const endingByEmail = page.getByRole('checkbox', { name: 'My window ends in 15 minutes: email' });
  await expect(endingByEmail).toBeChecked();
  await endingByEmail.uncheck();
  await page.getByRole('button', { name: 'Save choices' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
  await page.reload();
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
  await expect(page.getByRole('checkbox', { name: 'My window ends in 15 minutes: email' })).not.toBeChecked();
  await expect(page.getByRole('checkbox', { name: 'My window ends in 15 minutes: webhook' })).toBeChecked();

  await page.getByLabel('URL').fill('https://hooks.example.org/berth-e2e');
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await expect(page.locator('#webhook-secret')).toHaveValue(/^bwh_[0-9a-f]{48}$/);
  await expect(page.getByText('https://hooks.example.org/berth-e2e')).toBeVisible();
  await page.getByRole('button', { name: 'Remove the webhook https://hooks.example.org/berth-e2e' }).click();
  await expect(page.getByText('https://hooks.example.org/berth-e2e')).toHaveCount(0);
  expect(errors).toEqual([]);
});

// The feed address has a Copy button that puts it on the clipboard; a plain
// user sees only the notifications that can reach them (not an admin's).
test('Copy puts the feed address on the clipboard, and a user sees only their notification rows', async ({ browser }) => {
  const context = await browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
  const page = await context.newPage();
  const errors = collectErrors(page);
  await signIn(page, 'ada');
  await page.goto('/settings');
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
  const address = await page.locator('#feed-url').inputValue();
  const copy = page.locator('#feed-url + button.copy');
  await copy.click();
  await expect(copy).toHaveText('Copied');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(address);
  const rows = page.locator('table.notification-choices tbody th');
  await expect(rows.filter({ hasText: 'My booking is approved' })).toHaveCount(1);
  await expect(rows.filter({ hasText: '(admins)' })).toHaveCount(0);
  await expect(rows.filter({ hasText: 'Maintenance overlaps my booking' })).toHaveCount(1);
  // An admin has theirs.
  const root = await (await browser.newContext()).newPage();
  await signIn(root, 'root');
  await root.goto('/settings');
  await expect(root.locator('table.notification-choices tbody th').filter({ hasText: 'A booking awaits approval (admins)' })).toHaveCount(1);
  expect(errors).toEqual([]);
  await root.context().close();
  await context.close();
});
