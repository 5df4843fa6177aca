import { test, expect } from '@playwright/test';
import { collectErrors, signIn, signOut, sql } from './login';

// Shared bookings: ada shares a live session with mia (same tenant), not
// with bob (another tenant); mia finds it under her own bookings and opens
// its workspace. The portal's worker runs on the simulated cluster.

// An approved MIG booking of Ada's from `from` to `to` after now; its id.
function adasBooking(from: string, to: string, note: string): string {
  return sql(`
    INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state, note)
    SELECT k.pool_id, k.kind, u.id, m.tenant_id, 1, 'interactive', now() + interval '${from}', now() + interval '${to}',
           'approved', '${note}'
    FROM pool_kind k, app_user u JOIN membership m ON m.user_id = u.id
    WHERE k.kind LIKE 'nvidia.com/mig-%' AND u.name = 'Ada Lovelace' LIMIT 1
    RETURNING id`).split('\n')[0];
}

test('a co-owner opens a shared live session; a member of another tenant cannot be added', async ({ page }) => {
  const errors = collectErrors(page);
  // Their first logins create mia (tenant a) and bob (tenant b).
  for (const login of ['bob', 'mia']) {
    await signIn(page, login, false);
    await signOut(page);
  }
  await signIn(page, 'ada');
  // Shared before its session starts (a session already working in Ada's
  // kept home is not shared: a co-owner could write there); then its window opens.
  const id = adasBooking('2 hours', '3 hours', 'sharing e2e');
  try {
    await page.locator('nav.account').getByRole('link', { name: 'My bookings' }).click();
    const card = page.locator(`#booking-${id}`);
    await expect(card).toBeVisible();
    const share = async (email: string) => {
      await card.getByLabel("Teammate's email").fill(email);
      await card.getByRole('button', { name: 'Share', exact: true }).click();
    };

    // Said beside the card's field, as a sentence, not at the page's top.
    await share('bob@example.test');
    await expect(card.locator('.field-error')).toHaveText("Teammate's email names no active member of tenant a.");
    await expect(card.getByLabel("Teammate's email")).toHaveAttribute('aria-invalid', 'true');
    await expect(card.getByLabel("Teammate's email")).toHaveValue('bob@example.test');
    await expect(page.locator('#notice')).toHaveCount(0);
    await expect(card.locator('li.co-owner')).toHaveCount(0);

    await share('mia@example.test');
    await expect(page.locator('#notice')).toHaveText(/^Shared with mia@example.test/);
    await expect(card.locator('li.co-owner')).toHaveText(/Mia Manager \(mia@example\.test\)/);
    sql(`UPDATE booking SET starts_at = now() - interval '30 minutes', ends_at = now() + interval '1 hour' WHERE id = '${id}'`);
    await signOut(page);

    await signIn(page, 'mia');
    await page.locator('nav.account').getByRole('link', { name: 'My bookings' }).click();
    const shared = page.locator(`#live #booking-${id}`);
    await expect(shared.locator('.shared-by')).toHaveText('Shared with you by Ada Lovelace.');
    await expect(shared.getByRole('button', { name: 'Cancel booking' })).toHaveCount(0);
    // A co-owner shares the session, not the window: only the owner changes the booking.
    await expect(shared.getByRole('button', { name: 'End now' })).toHaveCount(0);
    await expect(shared.locator('.extend-by, .extend-to')).toHaveCount(0);
    await expect(shared.getByRole('button', { name: 'Leave mia@example.test' })).toBeVisible();
    // The worker prepares the session; then the co-owner's link leads to the workspace's gate with a one-time code.
    await expect(shared.locator('.workspace')).toContainText('Simulated cluster', { timeout: 30_000 });
    await expect.poll(async () => {
      const answer = await page.request.get(`/bookings/${id}/open`, { maxRedirects: 0 });
      return `${answer.status()} ${answer.headers()['location'] ?? ''}`;
    }, { timeout: 30_000 }).toMatch(/^303 https:\/\/berth-a-[0-9a-f]{8}\.[^ ]*\/\.berth\/open\?code=\d+\.[0-9a-f]{32}\.[0-9a-f]{64}$/);
    expect(errors).toEqual([]);
  } finally {
    sql(`UPDATE booking SET state = 'completed', ends_at = now() WHERE id = '${id}'`);
  }
});

test('without JavaScript, a refused address comes back beside its card field, the top of the page quiet', async ({ browser }) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await signIn(page, 'ada', false);
  const id = adasBooking('30 days', '30 days 1 hour', 'sharing without script');
  try {
    await page.goto(`/bookings/${id}`);
    const card = page.locator(`#booking-${id}`);
    await card.getByLabel("Teammate's email").fill('nobody@example.test');
    await card.getByRole('button', { name: 'Share', exact: true }).click();
    await expect(card.locator('.field-error')).toHaveText("Teammate's email names no active member of tenant a.");
    await expect(card.getByLabel("Teammate's email")).toHaveAttribute('aria-invalid', 'true');
    await expect(page.locator('#notice')).toHaveCount(0);
  } finally {
    sql(`UPDATE booking SET state = 'canceled' WHERE id = '${id}'`);
    await context.close();
  }
});
