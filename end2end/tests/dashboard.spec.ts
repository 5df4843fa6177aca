import { test, expect } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { collectErrors, signIn } from './login';

// A tenant member's dashboard: a live session's GPU use as sparklines and
// the idle badge. The measured minutes are written as the sampler writes
// them (its path from a real Prometheus is tested in Rust), because no
// Prometheus runs beside these tests.

function sql(statement: string): string {
  return execFileSync('psql', [process.env.BERTH_E2E_DATABASE_URL!, '-v', 'ON_ERROR_STOP=1', '-qAt', '-c', statement],
    { encoding: 'utf8' }).trim();
}

test('a member sees live sessions with sparklines and an idle badge', async ({ page }) => {
  const errors = collectErrors(page);
  await signIn(page, 'ada');
  // Ada's booking of one slice, live now, measured busy then idle for the last 40 minutes.
  const id = sql(`
    INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state, note)
    SELECT k.pool_id, k.kind, u.id, m.tenant_id, 1, 'interactive', now() - interval '1 hour', now() + interval '1 hour',
           'approved', 'dashboard e2e'
    FROM pool_kind k, app_user u JOIN membership m ON m.user_id = u.id
    WHERE k.kind LIKE 'nvidia.com/mig-%' AND u.name = 'Ada Lovelace' LIMIT 1
    RETURNING id`).split('\n')[0];
  try {
    // The minute under way too (k = 0): should a minute end between this
    // insert and the page's read, the run still reaches now, one minute longer.
    sql(`INSERT INTO usage_minute (booking_id, minute, busy, memory_used_mib, power_w, devices, simulated)
         SELECT '${id}', date_trunc('minute', now()) - make_interval(mins => k),
                CASE WHEN k <= 40 THEN 0.01 ELSE 0.8 END, 4096 - k * 10, NULL, 1, true
         FROM generate_series(0, 59) k`);
    await page.getByRole('link', { name: 'Dashboard' }).click();
    await expect(page.getByRole('heading', { name: /Dashboard/ })).toBeVisible();
    const row = page.locator(`tr.live-session[data-booking="${id}"]`);
    await expect(row.locator('svg.sparkline.busy polyline')).toHaveCount(1);
    await expect(row.locator('svg.sparkline.memory polyline')).toHaveCount(1);
    await expect(row.locator('svg.sparkline.busy')).toHaveAttribute('aria-label', /GPU busy 1 % now/);
    await expect(row.locator('.idle-badge')).toHaveText(/^Idle for 4[01] min \(below 5 %\)$/);
    await expect(page.locator('#dashboard-simulated')).toBeVisible();
    await expect(page.locator('#week-budget')).toBeVisible();
    expect(errors).toEqual([]);
  } finally {
    sql(`UPDATE booking SET state = 'completed', ends_at = now() WHERE id = '${id}'`);
  }
});

// The dashboard's times are in the reader's zone and say which (it used to
// write UTC without saying so).
test("the dashboard's live window is in the reader's zone, named once", async ({ browser }) => {
  const page = await (await browser.newContext({ timezoneId: 'Europe/Berlin' })).newPage();
  const errors = collectErrors(page);
  await signIn(page, 'ada');
  const id = sql(`
    INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state, note)
    SELECT k.pool_id, k.kind, u.id, m.tenant_id, 1, 'interactive', date_trunc('hour', now()) - interval '1 hour',
           date_trunc('hour', now()) + interval '2 hours', 'approved', 'dashboard zone e2e'
    FROM pool_kind k, app_user u JOIN membership m ON m.user_id = u.id
    WHERE k.kind LIKE 'nvidia.com/mig-%' AND u.name = 'Ada Lovelace' LIMIT 1
    RETURNING id`).split('\n')[0];
  try {
    await page.goto('/dashboard');
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    await expect(page.locator('#dashboard-zone')).toHaveText('Times in Europe/Berlin.');
    const start = new Date(sql(`SELECT to_char(starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') FROM booking WHERE id = '${id}'`));
    const berlin = start.toLocaleTimeString('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit' });
    await expect(page.locator(`tr.live-session[data-booking="${id}"]`)).toContainText(berlin);
    expect(errors).toEqual([]);
  } finally {
    sql(`UPDATE booking SET state = 'canceled' WHERE id = '${id}'`);
  }
  await page.context().close();
});
