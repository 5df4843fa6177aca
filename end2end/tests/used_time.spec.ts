import { test, expect, Browser } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import AxeBuilder from '@axe-core/playwright';
import { collectErrors, signIn } from './login';

// Reserved vs really used, on the calendar: a thin bar under one's own live
// booking says how much of its booked time was active, amber when booked
// units sit idle now; admins see it on every booking, named; another
// tenant sees occupancy only. The measured hours are written as the
// sampler writes them (its path from a real Prometheus is tested in Rust).

function sql(statement: string): string {
  return execFileSync('psql', [process.env.BERTH_E2E_DATABASE_URL!, '-v', 'ON_ERROR_STOP=1', '-qAt', '-c', statement],
    { encoding: 'utf8' }).trim();
}

async function signedIn(browser: Browser, login: string, width: number) {
  const context = await browser.newContext({ timezoneId: 'America/New_York', viewport: { width, height: 900 } });
  const page = await context.newPage();
  const errors = collectErrors(page);
  await signIn(page, login);
  return { page, errors };
}

async function calendarAs(browser: Browser, login: string, width: number, pool: string) {
  const { page, errors } = await signedIn(browser, login, width);
  await page.goto(`/calendar?pool=${pool}&view=day`);
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
  return { page, errors };
}

test('a live booking shows its used time to its owner and to admins, at both widths', async ({ browser }) => {
  // Ada's account exists once she has signed in.
  await (await signedIn(browser, 'ada', 1440)).page.context().close();
  // Ada's two L40S GPUs, live for two hours of four; 120 of the 240 booked
  // unit-minutes active, and one of the two GPUs idle in the last minute.
  const [id, pool] = sql(`
    INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state, note)
    SELECT k.pool_id, k.kind, u.id, m.tenant_id, 2, 'interactive', now() - interval '2 hours', now() + interval '2 hours',
           'approved', 'used time e2e'
    FROM pool_kind k JOIN pool p ON p.id = k.pool_id, app_user u JOIN membership m ON m.user_id = u.id
    WHERE p.name = 'lab-l40s' AND u.name = 'Ada Lovelace' LIMIT 1
    RETURNING id, pool_id`).split('\n')[0].split('|');
  try {
    sql(`INSERT INTO usage_hour (booking_id, hour, pool_id, tenant_id, user_id, samples, busy_unit_minutes,
                                 active_unit_minutes, memory_max_mib, energy_wh, simulated)
         SELECT id, date_trunc('hour', starts_at), pool_id, tenant_id, user_id, 120, 90, 120, 1000, 0, true
         FROM booking WHERE id = '${id}'`);
    sql(`INSERT INTO usage_minute (booking_id, minute, busy, memory_used_mib, devices, active_devices, simulated)
         SELECT '${id}', date_trunc('minute', now()) - make_interval(mins => k), 0.3, 1000, 2, 1, true
         FROM generate_series(0, 2) k`);
    for (const width of [1440, 390]) {
      const { page, errors } = await calendarAs(browser, 'ada', width, pool);
      // Day view of today: the booking began two hours ago (New York time).
      const bar = page.locator('.used-bar:not(.swatch-bar)');
      // Should two hours ago fall on yesterday in New York, the block starts there.
      if (await bar.count() === 0) await page.locator('#prev').click();
      await expect(bar).toHaveCount(1);
      const words = '50 % of the booked time so far was used · 1 booked unit idle now (simulated)';
      await expect(bar).toHaveAttribute('title', words);
      // The cell says it too: the bar is drawn, the grid cell is read.
      await expect(page.getByRole('gridcell', { name: new RegExp(`yours: 2(, now)?\\s*;\\s*used time e2e — You · GPU ×2 · \\w+\\s*;\\s*${words.replace(/[()]/g, '\\$&')}`) }))
        .toHaveCount(1);
      await expect(bar).toHaveClass(/idle/);
      await expect(bar.locator('.used-fill')).toHaveClass(/fill-50/);
      const box = await bar.boundingBox();
      expect(box?.height).toBeGreaterThan(2);
      expect(box?.width).toBeGreaterThan(10);
      // Drawn half full, not only so named: a "width: 0" once outweighed the fill's class.
      const fill = await bar.locator('.used-fill').boundingBox();
      expect(Math.abs((fill?.width ?? 0) / box!.width - 0.5)).toBeLessThan(0.05);
      // The now line sits at the minute within its slot (its "top: 50 %" was dropped the same way).
      const nowCell = page.locator('td.slot.now[class*="now-at-"]');
      if (await nowCell.count() > 0) {
        const [at, top, height] = await nowCell.first().evaluate((cell) => [
          Number(/now-at-(\d+)/.exec(cell.className)![1]),
          parseFloat(getComputedStyle(cell, '::after').top),
          cell.getBoundingClientRect().height,
        ]);
        expect(Math.abs((top / height) * 100 - at)).toBeLessThan(3);
      }
      const axe = await new AxeBuilder({ page }).include('.calendar').analyze();
      expect(axe.violations).toEqual([]);
      expect(errors).toEqual([]);
      await page.context().close();
    }
    // An admin sees the same bar, named; another tenant's member sees none.
    const root = await calendarAs(browser, 'root', 1440, pool);
    let bar = root.page.locator('.used-bar:not(.swatch-bar)');
    if (await bar.count() === 0) await root.page.locator('#prev').click();
    await expect(bar).toHaveAttribute('title', /^Ada Lovelace: 50 % of the booked time so far was used/);
    expect(root.errors).toEqual([]);
    const bob = await calendarAs(browser, 'bob', 1440, pool);
    await expect(bob.page.locator('.calendar')).toBeVisible();
    await expect(bob.page.locator('.used-bar:not(.swatch-bar)')).toHaveCount(0);
    await expect(bob.page.locator('body')).not.toContainText('used time e2e');
  } finally {
    if (id) sql(`UPDATE booking SET state = 'completed', ends_at = now() WHERE id = '${id}'`);
  }
});
