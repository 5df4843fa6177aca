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
    // The end before the start is a sentence beside the field it concerns,
    // which names it; no field name from the code.
    await page.goto(`/free?from=${day(ahead)}T13:00&to=${day(ahead)}T12:00`);
    const to = page.locator('#free-to-error');
    await expect(to).toHaveText('To must be after From.');
    await expect(page.locator('#free-to')).toHaveAttribute('aria-invalid', 'true');
    await expect(page.locator('#free-to')).toHaveAttribute('aria-describedby', 'free-to-error');
    await expect(page.locator('.field', { has: page.locator('#free-to') })).toContainText('To must be after From.');
    await expect(page.locator('#free-from')).not.toHaveAttribute('aria-invalid', 'true');
    await expect(page.locator('main')).not.toContainText('to:');
    // Minutes are said as hours and days.
    await page.goto(`/free?from=${day(ahead)}T13:00&to=${day(ahead)}T18:00&at_least=30000`);
    await expect(page.locator('#free-at_least-error')).toHaveText('At least must be between 15 minutes and 14 days.');
    await expect(page.locator('main')).not.toContainText('at_least');
    await expect(page.locator('main')).not.toContainText('20160');
    expect(errors).toEqual([]);
    await context.close();
  });
}
