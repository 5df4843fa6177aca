import { test, expect, Browser } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { mkdirSync } from 'node:fs';
import { collectErrors, signIn, sql } from './login';

// Issue 61: the week and day views draw bookings as blocks on the time
// axis (one's own, others' as anonymous occupancy, named for admins),
// overlapping blocks beside each other (cascading in a week's narrow
// lanes), free capacity as the lane's shade with the exact figure on hover
// and in the cell's name, today marked, and a key rather than a paragraph.
// Berlin time, 1440 and 390 px.

const ahead = 11;
const date = new Date(Date.now() + ahead * 86_400_000).toISOString().slice(0, 10);
const shots = 'test-results/screenshots';
mkdirSync(shots, { recursive: true });

async function open(browser: Browser, login: string, width: number) {
  const context = await browser.newContext({ timezoneId: 'Europe/Berlin', viewport: { width, height: 1000 } });
  const page = await context.newPage();
  const errors = collectErrors(page);
  await signIn(page, login);
  return { page, errors };
}

/// A booking on lab-h100's MIG slices, straight into the database as
/// admission would have written it, `hours` UTC on `date`.
function booking(person: string, quantity: number, [from, to]: [number, number], note: string): string {
  return sql(`
    INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state, note)
    SELECT k.pool_id, k.kind, u.id, m.tenant_id, ${quantity}, 'interactive', '${date}T${String(from).padStart(2, '0')}:00Z',
           '${date}T${String(to).padStart(2, '0')}:00Z', 'approved', '${note}'
    FROM pool_kind k JOIN pool p ON p.id = k.pool_id, app_user u JOIN membership m ON m.user_id = u.id
    WHERE p.name = 'lab-h100' AND k.kind = 'nvidia.com/mig-1g.24gb' AND u.name = '${person}' LIMIT 1
    RETURNING id`);
}

test('bookings are blocks, side by side where they overlap; free capacity is the shade, exact on hover', async ({ browser }) => {
  // Ada exists once she has signed in (E2E User from the global setup).
  await (await open(browser, 'ada', 1440)).page.context().close();
  const ids: string[] = [];
  try {
    ids.push(booking('Ada Lovelace', 1, [9, 12], 'blocks e2e'));
    ids.push(booking('E2E User', 2, [10, 13], 'another team run'));
    for (const width of [1440, 390]) {
      const { page, errors } = await open(browser, 'ada', width);
      await page.goto(`/calendar?date=${date}&view=day`);
      await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
      const mine = page.locator('.block.mine', { hasText: 'blocks e2e' });
      const theirs = page.locator('.block.others').filter({ hasText: 'MIG 1g.24gb ×2' });
      await expect(mine).toHaveCount(1);
      await expect(theirs).toHaveCount(1);
      // Others' occupancy carries no name and no note; one's own opens it.
      await expect(theirs).toContainText('Booked');
      await expect(page.locator('main')).not.toContainText('another team run');
      await expect(page.locator('main')).not.toContainText('E2E User');
      await expect(mine.locator('a.block-label')).toHaveAttribute('href', new RegExp(`/bookings/${ids[0]}$`));
      await expect(mine.locator('a.block-label')).toHaveAccessibleName('blocks e2e — You · MIG 1g.24gb ×1 · approved');
      // Side by side: neither hides the other.
      await mine.scrollIntoViewIfNeeded();
      const [a, b] = [(await mine.boundingBox())!, (await theirs.boundingBox())!];
      expect(a.x + a.width <= b.x + 1 || b.x + b.width <= a.x + 1, `${JSON.stringify(a)} ${JSON.stringify(b)}`).toBe(true);
      expect(b.height / a.height).toBeCloseTo(1, 1);
      // Three of four slices taken from 10:00 to 12:00 UTC (11:00 in Berlin).
      const cell = page.getByRole('gridcell', { name: /11:15, MIG 1g\.24gb: 1 of 4 free, yours: 1$/ });
      await expect(cell).toHaveClass(/free-low/);
      // Hovered, the cell shows its figure beside the pointer (its name,
      // drawn; no title repeats it in each of the week's cells).
      const tip = () => cell.evaluate((e) => getComputedStyle(e, '::before').content);
      expect(await tip()).toBe('none');
      await cell.hover();
      expect(await tip()).toMatch(/1 of 4 free, yours: 1"$/);
      await expect(cell).toHaveText('');
      // The key is a line of swatches; how to book is folded under it.
      await expect(page.locator('#legend ul.key li')).toHaveCount(11);
      await expect(page.locator('#legend details.how-to')).not.toHaveAttribute('open', '');
      const axe = await new AxeBuilder({ page }).include('.calendar').include('#legend').analyze();
      expect(axe.violations).toEqual([]);
      await page.screenshot({ path: `${shots}/calendar-blocks-day-${width}.png` });
      // The week: today's head is marked for eyes and screen readers.
      await page.goto('/calendar?view=week');
      await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
      await expect(page.locator('th.day-head.today')).toHaveCount(1);
      await expect(page.locator('th.day-head[aria-current="date"]')).toHaveCount(1);
      expect(errors).toEqual([]);
      await page.context().close();
    }
    // An admin sees whose the blocks are, and a week's narrow lanes cascade
    // them: the later one a step right, over the earlier, both readable.
    const { page, errors } = await open(browser, 'root', 1440);
    await page.goto(`/calendar?date=${date}&view=week`);
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    // On the week's first day, in the MIG lane (other tests book Ada elsewhere in the week).
    const ada = page.locator('[id^="cell-0-1-"] .block.others', { hasText: 'Ada Lovelace' });
    const own = page.locator('[id^="cell-0-1-"] .block.others', { hasText: 'E2E User' });
    await expect(ada).toHaveCount(1);
    await expect(own).toHaveCount(1);
    await ada.scrollIntoViewIfNeeded();
    const [a, b] = [(await ada.boundingBox())!, (await own.boundingBox())!];
    expect(b.x).toBeGreaterThan(a.x + 5);
    expect(b.y).toBeGreaterThan(a.y + 5);
    await page.screenshot({ path: `${shots}/calendar-blocks-week-admin.png` });
    expect(errors).toEqual([]);
    await page.context().close();
  } finally {
    for (const id of ids) sql(`UPDATE booking SET state = 'canceled' WHERE id = '${id}'`);
  }
});

test("a refused window reads as a sentence about the field, by its label, beside it, at both widths", async ({ browser }) => {
  for (const width of [1440, 390]) {
    const { page, errors } = await open(browser, 'ada', width);
    const later = new Date(Date.now() + 12 * 86_400_000).toISOString().slice(0, 10);
    await page.goto(`/calendar?date=${later}&view=day`);
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    await page.fill('#book-start', `${later}T10:00`);
    await page.fill('#book-end', `${later}T09:00`);
    await page.click('#book-submit');
    const outcome = page.locator('#outcome');
    await expect(outcome).toContainText('Not booked: Until must be after the start.');
    await expect(outcome).not.toContainText('(field');
    await expect(outcome).not.toContainText('end:');
    // And beside the field it concerns, which is marked and described by it,
    // with what was typed still there.
    await expect(page.locator('#book-end')).toHaveAttribute('aria-invalid', 'true');
    await expect(page.locator('#book-end')).toHaveAttribute('aria-describedby', 'book-end-error');
    await expect(page.locator('.field', { has: page.locator('#book-end') })).toContainText('Until must be after the start.');
    await expect(page.locator('#book-end')).toHaveValue(`${later}T09:00`);
    await expect(page.locator('#book-start')).not.toHaveAttribute('aria-invalid', 'true');
    // A screen reader hears it once: the sentence beside the field is the
    // alert, the banner above is not a second one.
    await expect(page.getByRole('alert')).toHaveCount(1);
    await expect(page.getByRole('alert')).toHaveText('Until must be after the start.');
    expect(errors).toEqual([]);
    await page.context().close();
  }
});
