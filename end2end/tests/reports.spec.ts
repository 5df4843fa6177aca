import { test, expect, Browser, Page } from '@playwright/test';
import { collectErrors, signIn } from './login';

// Tokenomics for managers: results follow the inputs as they are typed
// (hydrated) and come back from a script-less post; users cannot reach it.

async function as(browser: Browser, login: string, js: boolean): Promise<Page> {
  const context = await browser.newContext({ javaScriptEnabled: js });
  const page = await context.newPage();
  await signIn(page, login, js);
  return page;
}

async function fillWorkedCheck(page: Page) {
  const inputs: [string, string][] = [
    ['capex_per_gpu', '30000'], ['amortization_years', '4'], ['power_kw', '0.7'], ['pue', '1.2'],
    ['electricity_per_kwh', '0.083'], ['maintenance_pct_per_year', '10'], ['rent_per_gpu_hour', ''],
    ['tokens_per_second', '8088'], ['utilization_pct', '100'], ['price_per_million_tokens', '0.10'],
  ];
  for (const [name, value] of inputs) await page.locator(`#tk-${name}`).fill(value);
}

test('a manager edits the cost model and the results follow as they type', async ({ browser }) => {
  const page = await as(browser, 'mia', true);
  const errors = collectErrors(page);
  await page.getByRole('link', { name: 'Tokenomics' }).click();
  await expect(page.getByRole('heading', { name: 'Tokenomics' })).toBeVisible();
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
  await fillWorkedCheck(page);
  await expect(page.locator('#tk-cost-hour')).toHaveText('1.27');
  await expect(page.locator('#tk-cost-mtok')).toHaveText('0.044');
  await expect(page.locator('#tk-break-even')).toHaveText('43.6 %');
  // Half the utilisation doubles the cost per token, before anything is saved.
  await page.locator('#tk-utilization_pct').fill('50');
  await expect(page.locator('#tk-cost-mtok')).toHaveText('0.087');
  await page.locator('#tk-pue').fill('oops');
  await expect(page.locator('#tk-error')).toContainText('pue: must be a number');
  await page.locator('#tk-pue').fill('1.2');
  await page.locator('#tk-tokens_per_day').fill('1000000000');
  await expect(page.locator('#tk-gpus')).toHaveText('3');
  await page.locator('#tk-save').click();
  await expect(page.locator('#notice')).toContainText('Saved: 1.27 per GPU-hour');
  await page.reload();
  await expect(page.locator('#tk-utilization_pct')).toHaveValue('50');
  expect(errors).toEqual([]);
});

test('without JavaScript the form posts and the page shows the saved figures', async ({ browser }) => {
  const page = await as(browser, 'mia', false);
  await page.goto('/reports/tokenomics');
  await fillWorkedCheck(page);
  await page.locator('#tk-save').click();
  await expect(page.locator('#notice')).toContainText('Saved: 1.27 per GPU-hour');
  await expect(page.locator('#tk-cost-mtok')).toHaveText('0.044');
  await expect(page.locator('#tk-break-even')).toHaveText('43.6 %');
});

test('a user has no Tokenomics link and is refused the page', async ({ browser }) => {
  const page = await as(browser, 'ada', true);
  await expect(page.getByRole('link', { name: 'Tokenomics' })).toHaveCount(0);
  const response = await page.goto('/reports/tokenomics');
  expect(response?.status()).toBe(403);
});
