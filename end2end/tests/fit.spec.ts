import { test, expect } from '@playwright/test';
import { collectErrors, signIn } from './login';

// "Which kind fits my model?" (issue 48): from the booking panel, a person
// picks a model, precision, what they will do, the context and sequences,
// and reads the memory it needs with its arithmetic, each kind they may
// book (the smallest that holds it first), and its next free windows, one
// click from booked. Europe/Berlin, 1440 and 390 px, with and without JavaScript.

for (const [width, js] of [[1440, true], [390, true], [1440, false]] as const) {
  test(`at ${width} px ${js ? 'hydrated' : 'without JavaScript'} the helper sizes a model and books the kind that holds it`, async ({ browser }) => {
    const context = await browser.newContext({ timezoneId: 'Europe/Berlin', viewport: { width, height: 900 }, javaScriptEnabled: js });
    const page = await context.newPage();
    const errors = collectErrors(page);
    await signIn(page, 'ada', js);
    await page.goto('/calendar?pool=lab-h100');
    if (js) await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    await page.locator('#panel-fit-link').click();
    await expect(page).toHaveURL(/\/fit$/);
    if (js) await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    await page.selectOption('#fit-model', 'llama-3.1-8b');
    await page.selectOption('#fit-precision', 'bf16');
    await page.selectOption('#fit-workload', 'inference');
    await page.fill('#fit-context', '8192');
    await page.fill('#fit-sequences', '4');
    await page.click('#fit-submit');
    await expect(page.locator('#fit-verdict')).toContainText('Needs about 24 GB');
    // The form keeps what was asked.
    await expect(page.locator('#fit-model')).toHaveValue('llama-3.1-8b');
    await expect(page.locator('#fit-sequences')).toHaveValue('4');
    await expect(page.locator('#fit-arithmetic')).toContainText('KV cache = 2 × 32 layers × 8 KV heads × 128 head dim × 2 bytes × 8192 tokens × 4 sequences');
    const slice = page.locator('#fit-kinds tbody tr', { hasText: 'MIG 1g.24gb' }).first();
    await expect(slice.locator('td[data-label="Units"]')).toHaveText('—');
    await expect(slice).toContainText('does not fit one unit');
    const best = page.locator('#fit-kinds tbody tr').first();
    await expect(best).toHaveClass(/fits/);
    await expect(best.getByRole('link', { name: 'Find a window ›' })).toBeVisible();
    // The smallest kind's next free two hours, one click from booked.
    // A window that crosses midnight names both days (the evening's runs see one).
    const first = page.locator('#found li').first();
    await expect(first.locator('strong')).toHaveText(/^\w{3} \d\d \w{3} \d\d:\d\d(–\d\d:\d\d| – \w{3} \d\d \w{3} \d\d:\d\d)$/);
    await first.getByRole('button').click();
    await expect(page.locator('#outcome')).toContainText('Booked');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    // A question that cannot be answered says why beside the field, by its label.
    await page.goto('/fit?model=&params_b=13&workload=inference');
    await expect(page.locator('#fit-layers-error')).toHaveText("Layers is needed for inference (from the model's config.json).");
    await expect(page.locator('#fit-layers')).toHaveAttribute('aria-invalid', 'true');
    await expect(page.locator('#fit-layers')).toHaveAttribute('aria-describedby', 'fit-layers-error');
    await expect(page.locator('main')).not.toContainText('layers:');
    // Estimate with nothing chosen says what is missing.
    await page.goto('/fit');
    if (js) await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    await page.click('#fit-submit');
    await expect(page.locator('#fit-params_b-error')).toHaveText('Billions of parameters is needed when no model is chosen.');
    expect(errors).toEqual([]);
    await context.close();
  });
}
