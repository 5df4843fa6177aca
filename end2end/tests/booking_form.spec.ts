import { test, expect, Page } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { collectErrors, signIn } from './login';

// The booking form keeps what was typed after a booking and after a
// refusal, with and without JavaScript (it used to snap back to the first
// free slot of the view and to the first kind).

const day = (ahead: number) => new Date(Date.now() + ahead * 86_400_000).toISOString().slice(0, 10);

async function fields(page: Page) {
  return {
    kind: await page.locator('#book-kind').inputValue(),
    start: await page.locator('#book-start').inputValue(),
    end: await page.locator('#book-end').inputValue(),
  };
}

for (const js of [true, false]) {
  test(`the booking form keeps what was typed ${js ? 'hydrated' : 'without JavaScript'}`, async ({ browser }) => {
    const page = await (await browser.newContext({ javaScriptEnabled: js })).newPage();
    await signIn(page, 'ada', js);
    const pools = await (await page.request.get('/api/v1/pools')).json();
    const lab = pools.find((p: { name: string }) => p.name === 'lab-h100').id;
    const date = day(js ? 12 : 13);
    await page.goto(`/calendar?pool=${lab}&date=${date}&view=day&tz=UTC`);
    if (js) await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    const mig = 'nvidia.com/mig-1g.24gb';
    // Each kind says its memory and what fits it (issue 48).
    await expect(page.locator(`#book-kind option[value="${mig}"]`))
      .toHaveText('MIG 1g.24gb — 24 GB · inference of an 8B model in BF16 at 8k context');
    await page.selectOption('#book-kind', mig);
    await page.selectOption('#book-quantity', '1');
    await page.fill('#book-start', `${date}T10:00`);
    await page.fill('#book-end', `${date}T11:00`);
    await page.click('#book-submit');
    await expect(page.locator('#outcome')).toContainText('Booked');
    expect(await fields(page)).toEqual({ kind: mig, start: `${date}T10:00`, end: `${date}T11:00` });

    // Refused (the end before the start): the form still holds it, to correct.
    await page.fill('#book-start', `${date}T12:00`);
    await page.fill('#book-end', `${date}T11:30`);
    await page.click('#book-submit');
    await expect(page.locator('#outcome.refused')).toBeVisible();
    expect(await fields(page)).toEqual({ kind: mig, start: `${date}T12:00`, end: `${date}T11:30` });
    await page.context().close();
  });
}

// A request too large for the server (a note pushed past the field's limit
// by hand) is refused with 413; the page says so in words, with and without
// JavaScript, and the form keeps what was typed.
for (const js of [true, false]) {
  test(`an oversized booking says why it was refused ${js ? 'hydrated' : 'without JavaScript'}`, async ({ browser }) => {
    const page = await (await browser.newContext({ javaScriptEnabled: js })).newPage();
    await signIn(page, 'ada', js);
    const pools = await (await page.request.get('/api/v1/pools')).json();
    const lab = pools.find((p: { name: string }) => p.name === 'lab-h100').id;
    const date = day(js ? 14 : 15);
    await page.goto(`/calendar?pool=${lab}&date=${date}&view=day&tz=UTC`);
    if (js) await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    await page.fill('#book-start', `${date}T10:00`);
    await page.fill('#book-end', `${date}T11:00`);
    await page.locator('#book-note').evaluate((note: HTMLTextAreaElement) => {
      note.removeAttribute('maxlength');
      note.value = 'x'.repeat(400 * 1024);
    });
    await page.click('#book-submit');
    const said = js ? page.locator('#outcome') : page.locator('body');
    await expect(said).toContainText('Too much to send: a page may send at most 256 KB at once.');
    if (js) expect(await page.locator('#book-start').inputValue()).toBe(`${date}T10:00`);
    const mine = await (await page.request.get('/api/v1/bookings')).json();
    expect(JSON.stringify(mine)).not.toContain(`${date}T10:00:00Z`);
    await page.context().close();
  });
}

// A pool of many units (time-sliced shares, say) offers its units as a
// number field to type, not a list of a hundred choices (up to 64 it stays
// a list: calendar.spec). In Berlin, at both widths, with and without JavaScript.
for (const [width, js] of [[1440, true], [390, true], [1440, false]] as const) {
  test(`a pool of many units takes the units typed at ${width} px ${js ? 'hydrated' : 'without JavaScript'}`, async ({ browser }) => {
    const context = async () => browser.newContext({ javaScriptEnabled: js, timezoneId: 'Europe/Berlin',
      viewport: { width, height: 900 } });
    const root = await (await context()).newPage();
    await signIn(root, 'root', js);
    const created = await root.request.post('/api/v1/pools', { headers: { Origin: new URL(root.url()).origin },
      data: { name: `many-${width}-${js}-${Date.now()}`, kinds: [{ kind: 'nvidia.com/gpu', capacity: 100 }] } });
    expect(created.status(), await created.text()).toBe(201);
    const pool = (await created.json()).id;
    await root.context().close();

    const page = await (await context()).newPage();
    const errors = collectErrors(page);
    await signIn(page, 'ada', js);
    const date = day(16);
    await page.goto(`/calendar?pool=${pool}&date=${date}&view=day`);
    if (js) await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    const units = page.locator('#book-quantity');
    await expect(units).toHaveAttribute('type', 'number');
    await expect(units).toHaveAttribute('max', '100');
    await expect(page.getByRole('spinbutton', { name: 'Units' })).toBeVisible();
    await units.fill('70');
    await page.fill('#book-start', `${date}T10:00`);
    await page.fill('#book-end', `${date}T11:00`);
    await page.click('#book-submit');
    const said = js ? page.locator('#outcome') : page.locator('body');
    await expect(said).toContainText('Booked');
    const mine = await (await page.request.get(`/api/v1/bookings?pool_id=${pool}&mine=true`)).json();
    expect(mine.map((b: { quantity: number }) => b.quantity)).toEqual([70]);
    if (js) { // axe runs as a script in the page
      const axe = await new AxeBuilder({ page }).include('#booking-panel').analyze();
      expect(axe.violations.map((v) => v.id)).toEqual([]);
    }
    expect(errors).toEqual([]);
    await page.context().close();
  });
}
