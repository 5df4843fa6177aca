import { test, expect } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import AxeBuilder from '@axe-core/playwright';
import { collectErrors, signIn } from './login';

// A tenant member's dashboard: a live session's GPU use as a chart per
// device, over a range the reader picks, and the idle badge. The measured minutes are written as the sampler writes
// them (its path from a real Prometheus is tested in Rust), because no
// Prometheus runs beside these tests.

function sql(statement: string): string {
  return execFileSync('psql', [process.env.BERTH_E2E_DATABASE_URL!, '-v', 'ON_ERROR_STOP=1', '-qAt', '-c', statement],
    { encoding: 'utf8' }).trim();
}

test('a member sees each device of a live session charted, picks the range, and the idle badge', async ({ page }) => {
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
    // Its one slice, as the sampler writes each device's minute, for three hours.
    sql(`INSERT INTO usage_device_minute (booking_id, device, minute, busy, memory_used_mib)
         SELECT '${id}', 'GPU 0 · MIG 1g.24gb #1', date_trunc('minute', now()) - make_interval(mins => k),
                CASE WHEN k <= 40 THEN 0.01 ELSE 0.8 END, 4096
         FROM generate_series(0, 179) k`);
    await page.getByRole('link', { name: 'Dashboard' }).click();
    await expect(page.getByRole('heading', { name: /Dashboard/ })).toBeVisible();
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    const row = page.locator(`section.live-session[data-booking="${id}"]`);
    const chart = row.locator('figure.device-chart svg');
    await expect(chart).toHaveCount(1);
    await expect(chart.locator('polyline.busy')).toHaveCount(1);
    await expect(chart.locator('polyline.memory')).toHaveCount(1);
    await expect(chart).toHaveAttribute('aria-label',
      /^GPU 0 · MIG 1g\.24gb #1: engine busy and memory over the last hour; engine busy 1 %, 4\.0 GiB memory/);
    // Axes with units, and times on the hour's quarters.
    await expect(chart.locator('text.tick').filter({ hasText: '100 %' })).toHaveCount(1);
    await expect(chart.locator('text.tick').filter({ hasText: /^5 GiB$/ })).toHaveCount(1);
    expect((await chart.locator('text.date').allTextContents()).every((t) => /^\d\d:(00|15|30|45)$/.test(t))).toBe(true);
    await expect(row.locator('.idle-badge')).toHaveText(/^Idle for 4[01] min \(below 5 %\)$/);
    await expect(row.locator('figcaption')).toContainText('simulated');
    // Six hours: the busy stretch before the idle one shows; the choice is in the address.
    await page.locator('#range-6h').click();
    await expect(page).toHaveURL(/range=6h/);
    await expect(page.locator('#range-6h')).toHaveAttribute('aria-current', 'page');
    await expect(chart).toHaveAttribute('aria-label', /over the last 6 hours/);
    await expect(page.locator('#dashboard-simulated')).toBeVisible();
    await expect(page.locator('#week-budget')).toBeVisible();
    // The booking's own page draws the same chart.
    await page.goto(`/bookings/${id}?range=24h`);
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    await expect(page.locator('#session-charts figure.device-chart svg')).toHaveAttribute('aria-label', /over the last 24 hours/);
    const axe = await new AxeBuilder({ page }).include('#session-charts').analyze();
    expect(axe.violations).toEqual([]);
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
    await expect(page.locator(`section.live-session[data-booking="${id}"]`)).toContainText(berlin);
    expect(errors).toEqual([]);
  } finally {
    sql(`UPDATE booking SET state = 'canceled' WHERE id = '${id}'`);
  }
  await page.context().close();
});
