import { test, expect } from '@playwright/test';
import { collectErrors, signIn } from './login';

// Find a slot (issue 47, 3.1): the kind searched for stays chosen for the
// next search, and windows come on the pool's granularity — 2 h between
// 13:00 and 18:00 offers 16:00–18:00 too. Europe/Berlin, both widths.

const day = (ahead: number) => new Date(Date.now() + ahead * 86_400_000).toISOString().slice(0, 10);

for (const width of [1440, 390]) {
  test(`at ${width} px find a slot keeps the kind and offers every window on the granularity`, async ({ browser }) => {
    const context = await browser.newContext({ timezoneId: 'Europe/Berlin', viewport: { width, height: 900 } });
    const page = await context.newPage();
    await signIn(page, 'ada');
    const errors = collectErrors(page);
    await page.goto('/find');
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    const d = day(width === 1440 ? 20 : 21);
    // Each kind says its memory and what fits it, as the booking panel does.
    await expect(page.locator('#find-kind option[value="nvidia.com/mig-1g.24gb"]'))
      .toHaveText('MIG 1g.24gb (4 units) · 24 GB · inference of an 8B model in BF16 at 8k context');
    await page.selectOption('#find-kind', 'nvidia.com/mig-1g.24gb');
    await page.fill('#find-quantity', '1');
    await page.fill('#find-duration', '120');
    await page.fill('#find-earliest', `${d}T13:00`);
    await page.fill('#find-latest', `${d}T18:00`);
    await page.click('#find-submit');
    const found = page.locator('#found li');
    await expect(found).toHaveCount(13);
    await expect(found.first()).toContainText('13:00–15:00');
    await expect(found.last()).toContainText('16:00–18:00');
    // The next search looks for the same kind, not silently for whole GPUs.
    await expect(page.locator('#find-kind')).toHaveValue('nvidia.com/mig-1g.24gb');
    await page.fill('#find-duration', '60');
    await page.click('#find-submit');
    await expect(found.first()).toContainText('13:00–14:00');
    await expect(page.locator('#find-kind')).toHaveValue('nvidia.com/mig-1g.24gb');
    await expect(found.first()).toContainText('MIG');
    expect(errors).toEqual([]);
    await context.close();
  });
}
