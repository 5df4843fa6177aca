import { test, expect, Browser, Page } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { collectErrors, signIn } from './login';

// Issue 61, people's words: a refused field is a sentence by its label,
// beside the input it is about (marked invalid and named by it), on the
// pool form (with and without JavaScript), the series form and the
// report's period; no field name from the code ("horizon_days:", "until:")
// reaches the page. Berlin time, 1440 and 390 px.

async function as(browser: Browser, login: string, width: number, js = true): Promise<Page> {
  const context = await browser.newContext({
    timezoneId: 'Europe/Berlin', viewport: { width, height: 900 }, javaScriptEnabled: js,
  });
  const page = await context.newPage();
  await signIn(page, login, js);
  return page;
}

const isoDay = (daysAhead: number) => new Date(Date.now() + daysAhead * 86_400_000).toISOString().slice(0, 10);

/// The field's sentence is under its input, which is invalid and described by it.
async function refusedBeside(page: Page, input: string, error: string, sentence: string) {
  const said = page.locator(error);
  await expect(said).toHaveText(sentence);
  await expect(page.locator(input)).toHaveAttribute('aria-invalid', 'true');
  await expect(page.locator(input)).toHaveAttribute('aria-describedby', error.slice(1));
  const [field, words] = [(await page.locator(input).boundingBox())!, (await said.boundingBox())!];
  // Right under the input, not somewhere else on the page.
  expect(words.y).toBeGreaterThanOrEqual(field.y + field.height - 1);
  expect(words.y - (field.y + field.height)).toBeLessThan(40);
  await expect(page.locator('main')).not.toContainText(/\b[a-z]+_[a-z_]+:/);
}

for (const width of [1440, 390]) {
  for (const js of [true, false]) {
    test(`the pool form says which field is wrong beside it, ${js ? 'hydrated' : 'without JavaScript'}, at ${width} px`, async ({ browser }) => {
      const page = await as(browser, 'root', width, js);
      const errors = collectErrors(page);
      await page.goto('/admin/pools');
      const form = page.locator('#new-pool');
      await form.getByLabel('Name', { exact: true }).fill(`zz-words-${width}-${js}`);
      await form.getByLabel('Kind, kind row 1').fill('nvidia.com/gpu');
      await form.getByLabel('Physical units, kind row 1').fill('1');
      await form.getByLabel('Horizon (days ahead)').fill('0');
      await form.getByRole('button', { name: 'Create pool' }).click();
      await refusedBeside(page, 'input[name="form[horizon_days]"]', '#pool-horizon_days-error',
        'Horizon (days ahead) must be between 1 and 366 days.');
      // The page's notice says it too, in words.
      await expect(page.locator('#notice')).toHaveText('Horizon days must be between 1 and 366 days.');
      // Only that field is marked.
      await expect(form.locator('[aria-invalid="true"]')).toHaveCount(1);
      // Axe runs in the page: only with JavaScript.
      if (js) expect((await new AxeBuilder({ page }).include('#new-pool').analyze()).violations).toEqual([]);
      expect(errors).toEqual([]);
      await page.context().close();
    });
  }

  test(`a series' last day before its first is refused beside "Last day" at ${width} px`, async ({ browser }) => {
    const page = await as(browser, 'ada', width);
    const errors = collectErrors(page);
    await page.goto('/series');
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    await page.getByLabel('Pool and kind').selectOption({ label: 'lab-h100 · nvidia.com/mig-1g.24gb' });
    await page.getByLabel('First day').fill(isoDay(12));
    await page.getByLabel('From', { exact: true }).fill('09:00');
    await page.getByLabel('To', { exact: true }).fill('10:00');
    await page.getByLabel('Last day').fill(isoDay(10));
    await page.getByRole('button', { name: 'Preview occurrences' }).click();
    await refusedBeside(page, '#series-until', '#series-until-error', "Last day must be on or after the first window's day.");
    await expect(page.locator('#series-outcome')).toHaveText("Until must be on or after the first window's day.");
    // Corrected, the mark goes.
    await page.getByLabel(/^Last day/).fill(isoDay(13));
    await page.getByRole('button', { name: 'Preview occurrences' }).click();
    await expect(page.locator('#series-plan')).toBeVisible();
    await expect(page.locator('#series-until')).not.toHaveAttribute('aria-invalid', 'true');
    await expect(page.locator('#series-until-error')).toHaveCount(0);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test(`a custom report ending before it starts keeps the dates asked and marks "Until" at ${width} px`, async ({ browser }) => {
    const page = await as(browser, 'mia', width);
    const errors = collectErrors(page);
    await page.goto('/reports?period=custom&date=2026-11-10&until=2026-11-01');
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    await refusedBeside(page, '#report-until', '#report-until-error', 'Until (custom) must not be before the first day.');
    await expect(page.locator('#report-date')).toHaveValue('2026-11-10');
    await expect(page.locator('#report-period-kind')).toHaveValue('custom');
    expect((await new AxeBuilder({ page }).include('#report-period').analyze()).violations).toEqual([]);
    expect(errors).toEqual([]);
    await page.context().close();
  });
}
