import { test, expect } from '@playwright/test';
import { collectErrors, signIn, sql } from './login';

// Issue 61: long text is wrapped or limited with a counter, never cut
// silently. The note's field counts its 1 000 characters and says when the
// rest was not taken; an unbroken 1 000-character note wraps inside its card
// rather than pushing My bookings sideways. Berlin time, 1440 and 390 px.

const ahead = 13;
const date = new Date(Date.now() + ahead * 86_400_000).toISOString().slice(0, 10);

for (const [width, hour] of [[1440, 14], [390, 16]] as const) {
  test(`a 1000-character note is counted, kept whole and wrapped at ${width} px`, async ({ browser }) => {
    const context = await browser.newContext({ timezoneId: 'Europe/Berlin', viewport: { width, height: 900 } });
    const page = await context.newPage();
    const errors = collectErrors(page);
    await signIn(page, 'ada');
    await page.goto(`/calendar?date=${date}&view=day`);
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    const note = page.locator('#book-note');
    const counter = page.locator('#book-note-count');
    await expect(counter).toHaveText('0 of 1000 characters');
    await expect(note).toHaveAttribute('aria-describedby', 'book-note-count');
    await note.fill('see '.repeat(3));
    await expect(counter).toHaveText('12 of 1000 characters');
    // Each width its own letter: the other width's canceled booking keeps its card.
    const long = (width === 1440 ? 'x' : 'z').repeat(1000);
    await note.fill(long);
    await expect(counter).toContainText('1000 of 1000 characters: the most a note holds');
    await expect(counter).toHaveClass(/full/);
    // Typing on is refused by the field, and the counter said why.
    await note.press('End');
    await note.press('y');
    await expect(note).toHaveValue(long);
    await page.fill('#book-start', `${date}T${hour}:00`);
    await page.fill('#book-end', `${date}T${hour + 1}:00`);
    await page.click('#book-submit');
    await expect(page.locator('#outcome')).toContainText('Booked');
    const id = sql(`SELECT id FROM booking WHERE note = '${long}' AND state <> 'canceled' AND starts_at = '${date}T${hour}:00+01:00'`);
    expect(id).not.toBe('');
    try {
      await page.goto('/bookings');
      await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
      const card = page.locator('.booking-card', { hasText: long });
      await expect(card).toHaveCount(1);
      // The whole note, inside the page's width.
      await expect(card.locator('.booking-note')).toHaveText(`Note: ${long}`);
      const [scroll, client] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
      expect(scroll).toBeLessThanOrEqual(client);
      const box = (await card.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(width);
    } finally {
      sql(`UPDATE booking SET state = 'canceled' WHERE id = '${id}'`);
    }
    expect(errors).toEqual([]);
    await context.close();
  });
}
