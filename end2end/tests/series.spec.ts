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
    // A double click posts the same preview twice: it answers the same and
    // books nothing more (the cards below count 2).
    await page.getByRole('button', { name: 'Book the 2 that fit' }).dblclick();
    await expect(page.locator('#series-outcome')).toHaveText(/^Booked 2 occurrences: daily until/);
    // Once booked, the page says what was booked, not "Nothing is booked until you do".
    await expect(page.locator('#series-plan')).toHaveCount(0);
    await expect(page.getByText('Nothing is booked until you do')).toHaveCount(0);
    // Previewed again, the two booked are shown as already yours, not offered again.
    await page.getByRole('button', { name: 'Preview occurrences' }).click();
    await expect(rows).toHaveCount(3);
    await expect(rows.nth(0)).toHaveClass(/held/);
    await expect(rows.nth(0)).toContainText('already yours');
    await expect(rows.nth(2)).toHaveClass(/held/);
    await expect(page.locator('#series-plan')).toContainText('Every occurrence that fits is already yours.');

    // An end before the start is refused, not read as the next morning.
    await page.getByLabel('From').fill('10:00');
    await page.getByLabel('To').fill('09:00');
    await page.getByRole('button', { name: 'Preview occurrences' }).click();
    await expect(page.locator('#series-outcome')).toContainText('must be after From');
    await expect(page.locator('#series-plan')).toHaveCount(0);

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

// The last Sunday of March after `from` (Europe's spring clock change).
function springForward(from: Date): Date {
  for (let year = from.getUTCFullYear(); ; year++) {
    const last = new Date(Date.UTC(year, 2, 31));
    last.setUTCDate(31 - last.getUTCDay());
    if (last > from) return last;
  }
}

test('a series booked in Europe/Berlin keeps its wall-clock time across the spring clock change', async ({ browser }) => {
  const change = springForward(new Date());
  const day = (offset: number) => new Date(change.getTime() + offset * 86_400_000).toISOString().slice(0, 10);
  // The change is months ahead: the lab's horizon reaches it for this test.
  sql(`UPDATE pool SET horizon_days = 400 WHERE name = 'lab-h100'`);
  const context = await browser.newContext({ timezoneId: 'Europe/Berlin' });
  const page = await context.newPage();
  const errors = collectErrors(page);
  try {
    await signIn(page, 'ada');
    await page.goto('/series');
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    await expect(page.getByText('Times in Europe/Berlin')).toBeVisible();
    await page.getByLabel('Pool and kind').selectOption({ label: 'lab-h100 · nvidia.com/mig-1g.24gb' });
    await page.getByLabel('First day').fill(day(-2));
    await page.getByLabel('From').fill('09:00');
    await page.getByLabel('To').fill('11:00');
    await page.getByLabel('daily').check();
    await page.getByLabel('Last day').fill(day(2));
    await page.getByRole('button', { name: 'Preview occurrences' }).click();
    const rows = page.locator('#series-plan tr.occurrence');
    await expect(rows).toHaveCount(5);
    for (let i = 0; i < 5; i++) await expect(rows.nth(i)).toContainText('09:00–11:00');
    await expect(page.locator('#series-plan h2')).toContainText('09:00–11:00 Europe/Berlin');
    await page.getByRole('button', { name: 'Book the 5 that fit' }).click();
    await expect(page.locator('#series-outcome')).toHaveText(/^Booked 5 occurrences/);
    // 09:00 in Berlin is 08:00 UTC in winter and 07:00 UTC from the change on.
    const starts = sql(`SELECT string_agg(to_char(b.starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), ',' ORDER BY b.starts_at)
      FROM booking b JOIN app_user u ON u.id = b.user_id
      WHERE u.email = 'ada@example.test' AND b.series_id IS NOT NULL AND b.state = 'approved'
        AND b.starts_at::date BETWEEN '${day(-2)}' AND '${day(2)}'`);
    expect(starts.split(',')).toEqual([
      `${day(-2)} 08:00`, `${day(-1)} 08:00`, `${day(0)} 07:00`, `${day(1)} 07:00`, `${day(2)} 07:00`,
    ]);
    expect(errors).toEqual([]);
  } finally {
    const ids = sql(`SELECT b.id FROM booking b JOIN app_user u ON u.id = b.user_id WHERE u.email = 'ada@example.test'
      AND b.series_id IS NOT NULL AND b.state = 'approved' AND b.starts_at::date BETWEEN '${day(-2)}' AND '${day(2)}'`);
    const origin = { Origin: new URL(page.url()).origin };
    for (const id of ids.split('\n').filter(Boolean)) {
      await page.request.post(`/api/v1/bookings/${id}/cancel`, { headers: origin });
    }
    sql(`UPDATE pool SET horizon_days = 28 WHERE name = 'lab-h100'`);
    await context.close();
  }
});

// Each of the recurring form's labels sits over its field, at both widths
// (they once ran together on one line).
for (const width of [1440, 390]) {
  test(`at ${width} px the recurring form's labels and fields do not run together`, async ({ browser }) => {
    const page = await (await browser.newContext({ timezoneId: 'Europe/Berlin', viewport: { width, height: 900 } })).newPage();
    const errors = collectErrors(page);
    await signIn(page, 'ada');
    await page.goto('/series');
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    // Its own labels and those its fields draw (`Field`).
    const labels = page.locator('.series-form > label, .series-form > .field > label');
    expect(await labels.count()).toBeGreaterThanOrEqual(6);
    for (const label of await labels.all()) {
      const [text, field] = await label.evaluate((el) => {
        const control = el.querySelector('input, select')!;
        const range = document.createRange();
        range.selectNodeContents(el.firstChild!);
        const words = range.getBoundingClientRect();
        const box = control.getBoundingClientRect();
        return [{ bottom: words.bottom, right: words.right }, { top: box.top, left: box.left, right: box.right }];
      });
      expect(field.top, await label.innerText()).toBeGreaterThanOrEqual(text.bottom - 1);
      expect(field.right).toBeLessThanOrEqual(width);
    }
    expect(errors).toEqual([]);
    await page.context().close();
  });
}
