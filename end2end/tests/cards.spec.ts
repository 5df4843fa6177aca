import { test, expect } from '@playwright/test';
import { collectErrors, signIn, slot } from './login';

// A booking's own page and card (issue 47, 3.2): its note and workspace
// image are on it, and a canceled booking no longer counts down to a start
// that will not come. Europe/Berlin, both widths.

for (const width of [1440, 390]) {
  test(`at ${width} px a card shows its note and image, and a canceled one counts nothing down`, async ({ browser }) => {
    const context = await browser.newContext({ timezoneId: 'Europe/Berlin', viewport: { width, height: 900 } });
    const page = await context.newPage();
    await signIn(page, 'ada');
    const errors = collectErrors(page);
    const origin = { Origin: new URL(page.url()).origin };
    const pools = await (await page.request.get('/api/v1/pools')).json();
    const lab = pools.find((p: { name: string }) => p.name === 'lab-h100');
    const base = width === 1440 ? 160 : 170;
    const made = await page.request.post('/api/v1/bookings', { headers: origin, data: { pool_id: lab.id,
      kind: 'nvidia.com/mig-1g.24gb', quantity: 1, mode: 'interactive', start: slot(base), end: slot(base + 4),
      note: 'LoRA on the 8B, checkpoints in ~/runs' } });
    expect(made.status(), await made.text()).toBe(201);
    const booking = await made.json();
    await page.goto(`/bookings/${booking.id}`);
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    const card = page.locator(`#booking-${booking.id}`);
    await expect(card.locator('.booking-note')).toHaveText('Note: LoRA on the 8B, checkpoints in ~/runs');
    await expect(card.locator('.booking-image')).toContainText(booking.image);
    await expect(card.locator('.countdown')).toContainText(/starts in \d+ h/);

    const canceled = await page.request.post(`/api/v1/bookings/${booking.id}/cancel`, { headers: origin });
    expect(canceled.status(), await canceled.text()).toBe(200);
    await page.reload();
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    await expect(card.locator('.badge')).toHaveText('canceled');
    await expect(card.locator('.countdown')).toHaveText('');
    expect(errors).toEqual([]);
    await context.close();
  });
}
