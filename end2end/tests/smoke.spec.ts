import { test, expect } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { collectErrors, signIn } from './login';

const token = () => readFileSync('test-results-token.txt', 'utf8').trim();

function nextQuarterHour(offsetSlots: number): string {
  const slot = 15 * 60 * 1000;
  return new Date((Math.floor(Date.now() / slot) + 1 + offsetSlots) * slot).toISOString();
}

test('the page renders the pools, hydrates, and refreshes bookings without a reload', async ({ page, request }) => {
  const errors = collectErrors(page);
  await signIn(page, 'ada');
  await expect(page.getByRole('heading', { name: 'lab-h100' })).toBeVisible();
  await expect(page.locator('.kinds').getByText('nvidia.com/mig-1g.24gb')).toBeVisible();
  // The marker flips only when the WASM has hydrated the page.
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
  const rows = page.locator('table.bookings tbody tr');
  const before = await rows.count();

  const booked = await request.post('/api/v1/bookings', {
    headers: { Authorization: `Bearer ${token()}` },
    data: {
      pool_id: await poolId(request), kind: 'nvidia.com/mig-1g.24gb', quantity: 2,
      start: nextQuarterHour(4), end: nextQuarterHour(8), mode: 'interactive',
    },
  });
  expect(booked.status()).toBe(201);

  await page.evaluate(() => { (window as any).sameDocument = true; });
  await page.getByRole('button', { name: 'Refresh' }).click();
  await expect(rows).toHaveCount(before + 1);
  // Units 2 in the MIG lane: the booking made above, shown as occupancy.
  await expect(rows.filter({ hasText: 'nvidia.com/mig-1g.24gb' }).filter({ has: page.locator('td', { hasText: /^2$/ }) })).toHaveCount(1);
  expect(await page.evaluate(() => (window as any).sameDocument)).toBe(true);
  expect(errors).toEqual([]);
});

test.describe('without JavaScript', () => {
  test.use({ javaScriptEnabled: false });

  test('signing in and the server-rendered page work', async ({ page }) => {
    await signIn(page, 'ada', false);
    await expect(page.getByRole('heading', { name: 'lab-h100' })).toBeVisible();
    await expect(page.getByText('of 4 free now')).toBeVisible();
    await expect(page.getByText('Loading pools')).toHaveCount(0);
  });
});

async function poolId(request: import('@playwright/test').APIRequestContext): Promise<string> {
  const pools = await request.get('/api/v1/pools', { headers: { Authorization: `Bearer ${token()}` } });
  expect(pools.status()).toBe(200);
  return (await pools.json()).find((p: { name: string }) => p.name === 'lab-h100').id;
}
