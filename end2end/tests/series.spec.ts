import { test, expect } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { collectErrors, signIn, confirmOnCard } from './login';

// Recurring bookings in the portal: the preview lists each occurrence as
// fitting or refused (and why), the user books the ones that fit, and
// cancels this and later occurrences from a card.

function sql(statement: string): string {
  return execFileSync('psql', [process.env.BERTH_E2E_DATABASE_URL!, '-v', 'ON_ERROR_STOP=1', '-qAt', '-c', statement],
    { encoding: 'utf8' }).trim();
}

const isoDay = (daysAhead: number) => new Date(Date.now() + daysAhead * 86_400_000).toISOString().slice(0, 10);

test('a daily series: the preview says which occurrences fit, the fitting ones are booked, the rest canceled', async ({ page }) => {
  const errors = collectErrors(page);
  const [first, second, last] = [isoDay(10), isoDay(11), isoDay(12)];
  // Every slice is taken on the second day, 06:00–07:00 UTC.
  const filler = sql(`
    INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state, note)
    SELECT k.pool_id, k.kind, u.id, m.tenant_id, k.capacity, 'interactive', '${second}T06:00:00Z', '${second}T07:00:00Z',
           'approved', 'series e2e filler'
    FROM pool_kind k JOIN pool p ON p.id = k.pool_id, app_user u JOIN membership m ON m.user_id = u.id
    WHERE p.name = 'lab-h100' AND k.kind = 'nvidia.com/mig-1g.24gb' AND u.email = 'e2e@berth.test' LIMIT 1
    RETURNING id`).split('\n')[0];
  try {
    await signIn(page, 'ada');
    await page.goto('/series?tz=UTC');
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    await page.getByLabel('Pool and kind').selectOption({ label: 'lab-h100 · nvidia.com/mig-1g.24gb' });
    await page.getByLabel('First day').fill(first);
    await page.getByLabel('From').fill('06:00');
    await page.getByLabel('To').fill('07:00');
    await page.getByLabel('daily').check();
    await page.getByLabel('Last day').fill(last);
    await page.getByRole('button', { name: 'Preview occurrences' }).click();

    const rows = page.locator('#series-plan tr.occurrence');
    await expect(rows).toHaveCount(3);
    await expect(rows.nth(0)).toHaveClass(/fits/);
    await expect(rows.nth(1)).toContainText('refused: not enough free capacity: 4 of 4 units');
    await expect(rows.nth(2)).toHaveClass(/fits/);
    await expect(page.locator('#series-plan h2')).toContainText('daily until');
    await page.getByRole('button', { name: 'Book the 2 that fit' }).click();
    await expect(page.locator('#series-outcome')).toHaveText(/^Booked 2 occurrences: daily until/);
    // A second click on the same preview answers the same and books nothing more.
    const again = page.waitForResponse((r) => r.url().includes('/rpc/series/book'));
    await page.getByRole('button', { name: 'Book the 2 that fit' }).click();
    expect((await again).status()).toBe(200);
    await expect(page.locator('#series-outcome')).toHaveText(/^Booked 2 occurrences: daily until/);

    await page.goto('/bookings?tz=UTC');
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    const cards = page.locator('article.booking-card', { has: page.locator('p.series') });
    await expect(cards).toHaveCount(2);
    await expect(cards.first().locator('p.series')).toContainText('Repeats daily until');
    await confirmOnCard(page, cards.first(), 'Cancel this and later occurrences', 'Yes, cancel them');
    await expect(page.locator('#notice')).toHaveText('Canceled 2 occurrences of the series; the capacity is free again.');
    expect(errors).toEqual([]);
  } finally {
    sql(`UPDATE booking SET state = 'canceled' WHERE id = '${filler}'`);
  }
});
