import { test, expect } from '@playwright/test';
import { collectErrors, signIn, slot } from './login';

// One clock (issue 47): pages that wrote UTC write the reader's zone (the
// browser's, here Europe/Berlin, an hour ahead of UTC in winter) and name it
// once — home, tokens, approvals, audit, worker — as every role, at both widths.

const berlin = (at: Date) => {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', weekday: 'short', day: '2-digit',
    month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(at);
  const get = (type: string) => parts.find((p) => p.type === type)?.value;
  return `${get('weekday')} ${get('day')} ${get('month')} ${get('year')} ${get('hour')}:${get('minute')}`;
};

for (const width of [1440, 390]) {
  for (const login of ['ada', 'mia', 'root']) {
    test(`as ${login} at ${width} px, times read in the reader's zone, named once`, async ({ browser }) => {
      const context = await browser.newContext({ timezoneId: 'Europe/Berlin', viewport: { width, height: 900 } });
      const page = await context.newPage();
      await signIn(page, login);
      const errors = collectErrors(page);

      // A token made now reads now, in Berlin.
      await page.goto('/tokens');
      await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
      const before = new Date();
      const name = `clock ${width} ${Date.now()}`;
      await page.locator('input[name="name"]').fill(name);
      await page.getByRole('button', { name: 'Create token' }).click();
      await expect(page.locator('#new-token')).toBeVisible();
      await expect(page.locator('.zone-note')).toHaveText('Times in Europe/Berlin');
      const created = page.locator('#token-list tr', { hasText: name }).locator('td').nth(1);
      const text = await created.innerText();
      const after = new Date();
      expect([berlin(before), berlin(after)]).toContain(text);
      expect(text).not.toContain('UTC');

      await page.goto('/');
      await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
      await expect(page.getByText(/As of .* · times in Europe\/Berlin/)).toBeVisible();

      if (login === 'root') {
        // An extension's recorded reason reads in the reader's zone too.
        const ada = await (await browser.newContext()).newPage();
        await signIn(ada, 'ada');
        const origin = { Origin: new URL(ada.url()).origin };
        const pools = await (await ada.request.get('/api/v1/pools')).json();
        const lab = pools.find((p: { name: string }) => p.name === 'lab-h100');
        const base = width === 1440 ? 300 : 310;
        const booked = await ada.request.post('/api/v1/bookings', { headers: origin, data: { pool_id: lab.id,
          kind: 'nvidia.com/mig-1g.24gb', quantity: 1, mode: 'interactive', start: slot(base), end: slot(base + 2) } });
        expect(booked.status(), await booked.text()).toBe(201);
        const later = new Date(slot(base + 3));
        const extended = await ada.request.post(`/api/v1/bookings/${(await booked.json()).id}/extend`,
          { headers: origin, data: { end: later.toISOString() } });
        expect(extended.status(), await extended.text()).toBe(200);
        await ada.context().close();
        await page.goto('/admin/audit');
        await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
        await expect(page.locator('#audit-list th').first()).toHaveText('When (Europe/Berlin)');
        await expect(page.locator('#audit-list')).toContainText(`extended to ${berlin(later)}`);
        await expect(page.locator('#audit-list')).not.toContainText('+00:00');
        await page.goto('/admin/worker');
        await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
        await expect(page.locator('.zone-note')).toHaveText('Times in Europe/Berlin');
        await expect(page.locator('#worker-processes')).not.toContainText('UTC');
      }
      expect(errors).toEqual([]);
      await context.close();
    });
  }
}

test('maintenance windows are typed and listed in the pool\'s zone, and one already over is refused', async ({ browser }) => {
  const context = await browser.newContext({ timezoneId: 'America/New_York', viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  await signIn(page, 'root');
  const errors = collectErrors(page);
  const pools = await (await page.request.get('/api/v1/pools')).json();
  const lab = pools.find((p: { name: string }) => p.name === 'lab-h100');
  expect(lab.time_zone).toBe('Europe/Berlin');
  // A winter day five weeks ahead: Berlin is UTC+1 then.
  const day = new Date(Date.now() + 35 * 86_400_000).toISOString().slice(0, 10);
  await page.goto(`/admin/pools/${lab.id}`);
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
  await expect(page.locator('.blackouts .zone-note')).toHaveText("Times in Europe/Berlin, the pool's zone.");
  await expect(page.getByLabel('From (Europe/Berlin)')).toBeVisible();
  await page.fill('#blackout-start', `${day}T09:00`);
  await page.fill('#blackout-end', `${day}T10:00`);
  await page.fill('#blackout-reason', 'clock check');
  await page.click('#blackout-submit');
  await expect(page.locator('#blackout-outcome')).toContainText('Maintenance window scheduled');
  await expect(page.locator('#blackout-list')).toContainText('09:00–10:00');
  const listed = await (await page.request.get(`/api/v1/pools/${lab.id}/blackouts`)).json();
  const made = listed.find((b: { reason: string }) => b.reason === 'clock check');
  expect(new Date(made.start).toISOString()).toBe(`${day}T08:00:00.000Z`);

  // Yesterday's window is over before it is saved.
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  await page.fill('#blackout-start', `${yesterday}T09:00`);
  await page.fill('#blackout-end', `${yesterday}T10:00`);
  await page.fill('#blackout-reason', 'too late');
  await page.click('#blackout-submit');
  await expect(page.locator('#blackout-outcome')).toContainText('has passed');
  const origin = { Origin: new URL(page.url()).origin };
  expect((await page.request.delete(`/api/v1/blackouts/${made.id}`, { headers: origin })).status()).toBe(204);
  expect(errors).toEqual([]);
  await context.close();
});
