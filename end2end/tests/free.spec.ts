import { test, expect } from '@playwright/test';
import { collectErrors, signIn } from './login';

// "What is free then" (issue 48): a person gives a window first, then sees
// what every pool and kind they may book has free for all of it or part of
// it, and books a row in one click — at 1440 and 390 px, in Europe/Berlin,
// with and without JavaScript.

const day = (ahead: number) => new Date(Date.now() + ahead * 86_400_000).toISOString().slice(0, 10);

for (const [width, js, ahead] of [[1440, true, 24], [390, true, 25], [390, false, 26]] as const) {
  test(`at ${width} px ${js ? 'hydrated' : 'without JavaScript'} a window shows what is free and books in one click`, async ({ browser }) => {
    const context = await browser.newContext({ timezoneId: 'Europe/Berlin', viewport: { width, height: 900 }, javaScriptEnabled: js });
    const page = await context.newPage();
    const errors = collectErrors(page);
    await signIn(page, 'ada', js);
    await page.goto('/find');
    if (js) await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    await page.locator('#free-link').click();
    await expect(page).toHaveURL(/\/free$/);
    if (js) await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    await page.fill('#free-from', `${day(ahead)}T13:00`);
    await page.fill('#free-to', `${day(ahead)}T18:00`);
    await page.fill('#free-at-least', '120');
    await page.click('#free-submit');
    const whole = page.locator('#free-whole li');
    await expect(whole.first()).toBeVisible();
    await expect(whole.first().locator('.when')).toContainText('13:00–18:00');
    await whole.first().getByRole('button').click();
    await expect(page.locator('#outcome')).toContainText('Booked');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    // The end before the start is said, naming the field.
    await page.goto(`/free?from=${day(ahead)}T13:00&to=${day(ahead)}T12:00`);
    await expect(page.locator('#free-error')).toContainText('to: must be after from');
    expect(errors).toEqual([]);
    await context.close();
  });
}
