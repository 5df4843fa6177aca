import { test, expect, Page } from '@playwright/test';
import { bookLab as book, collectErrors, signIn, slot, sql } from './login';

// Destructive actions ask first, a booking on the calendar opens its own
// page, the week view marks now, and a page for another role says so.

async function state(page: Page, id: string): Promise<string> {
  return (await (await page.request.get(`/api/v1/bookings/${id}`)).json()).state;
}

for (const js of [true, false]) {
  test.describe(js ? 'with JavaScript' : 'without JavaScript', () => {
    test.use({ javaScriptEnabled: js });

    test('Cancel asks first; keeping it changes nothing, confirming cancels', async ({ page }) => {
      const errors = collectErrors(page);
      await signIn(page, 'ada', js);
      const { booking } = await book(page, 4 * 24 * 4 + 8, 4 * 24 * 4 + 10);
      await page.goto('/bookings?tz=UTC');
      if (js) await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
      const card = page.locator(`#booking-${booking.id}`);
      await card.getByRole('button', { name: 'Cancel booking', exact: true }).click();
      const dialog = page.getByRole('dialog');
      await expect(dialog).toBeVisible();
      await expect(dialog).toContainText('Cancel your booking of 1 × MIG 1g.24gb on lab-h100');
      // Without JavaScript the question is the booking's own page.
      if (!js) await expect(page).toHaveURL(new RegExp(`/bookings/${booking.id}\\?confirm=cancel$`));
      expect(await state(page, booking.id)).toBe('approved');

      await dialog.getByRole('button', { name: 'Keep it' }).click();
      await expect(page.getByRole('dialog')).toHaveCount(0);
      expect(await state(page, booking.id)).toBe('approved');

      await card.getByRole('button', { name: 'Cancel booking', exact: true }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Yes, cancel booking' }).click();
      await expect(page.locator('#notice')).toContainText('Canceled');
      expect(await state(page, booking.id)).toBe('canceled');
      // Answered once, the question is not asked again.
      await expect(page.getByRole('dialog')).toHaveCount(0);
      expect(page.url()).not.toContain('confirm=');
      expect(errors).toEqual([]);
    });

    test('End now asks first, then ends the running session', async ({ page }) => {
      await signIn(page, 'ada', js);
      const { booking } = await book(page, 0, 2);
      await page.goto(`/bookings/${booking.id}?tz=UTC`);
      if (js) await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
      await expect(page.getByRole('heading', { name: 'Booking', exact: true })).toBeVisible();
      const card = page.locator(`#booking-${booking.id}`);
      await card.getByRole('button', { name: 'End now', exact: true }).click();
      const dialog = page.getByRole('dialog');
      await expect(dialog).toContainText('End your session of 1 × MIG 1g.24gb on lab-h100 now?');
      expect(['approved', 'active']).toContain(await state(page, booking.id));
      await dialog.getByRole('button', { name: 'Yes, end now' }).click();
      await expect(page.locator('#notice')).toContainText('Ended');
      await expect(card.getByRole('button', { name: 'End now', exact: true })).toHaveCount(0);
      const ended = await (await page.request.get(`/api/v1/bookings/${booking.id}`)).json();
      expect(new Date(ended.end).getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    });
  });
}

test("a booking's label on the calendar opens its page: who, what, state, steps and actions", async ({ page }) => {
  const errors = collectErrors(page);
  await signIn(page, 'ada');
  const { booking, pool } = await book(page, 3 * 24 * 4 + 4, 3 * 24 * 4 + 8);
  const day = slot(3 * 24 * 4 + 4).slice(0, 10);
  await page.goto(`/calendar?pool=${pool}&date=${day}&view=day&tz=UTC`);
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
  await page.locator(`a.block-label[href="/bookings/${booking.id}"]`).first().click();
  await expect(page).toHaveURL(new RegExp(`/bookings/${booking.id}$`));
  await expect(page).toHaveTitle('Booking — Berth');
  const card = page.locator(`#booking-${booking.id}`);
  await expect(card.locator('.badge')).toHaveText('approved');
  await expect(card).toContainText('lab-h100');
  await expect(card.getByRole('button', { name: 'Cancel booking', exact: true })).toBeVisible();
  await expect(page.locator('article.booking-card')).toHaveCount(1);
  // Someone else's booking, or none: not found, nothing shown.
  const bob = await (await page.context().browser()!.newContext()).newPage();
  await signIn(bob, 'bob');
  const other = await bob.goto(`/bookings/${booking.id}`);
  expect(other!.status()).toBe(404);
  await expect(bob.locator('article.booking-card')).toHaveCount(0);
  await expect(bob.getByRole('alert')).toHaveText('Could not load: booking not found');
  await bob.context().close();
  await page.request.post(`/api/v1/bookings/${booking.id}/cancel`, { headers: { Origin: new URL(page.url()).origin }, data: {} });
  expect(errors).toEqual([]);
});

test("the audit log links a booking to its page, where an admin acts on someone else's booking as an admin", async ({ page }) => {
  const errors = collectErrors(page);
  await signIn(page, 'ada');
  const { booking } = await book(page, 5 * 24 * 4 + 8, 5 * 24 * 4 + 10);
  const root = await (await page.context().browser()!.newContext()).newPage();
  const rootErrors = collectErrors(root);
  await signIn(root, 'root');
  await root.goto('/admin/audit?action=booking.create');
  await expect(root.locator('main[data-hydrated="true"]')).toBeAttached();
  // Named as a person reads it, in the reader's zone, not by its id.
  const named = root.locator(`#audit-list a.audit-target[href="/bookings/${booking.id}"]`);
  const zone = (await root.locator('#audit-list thead th').first().textContent())!.match(/\((.+)\)/)![1];
  const local = (at: string) => new Date(at).toLocaleTimeString('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit' });
  await expect(named).toContainText(`Ada Lovelace's booking on lab-h100, `);
  // A window that ends on the next day (at midnight, say) names both days.
  await expect(named).toContainText(new RegExp(`${local(booking.start)}(–| – \\w{3} \\d\\d \\w{3} )${local(booking.end)}`));
  await named.click();
  await expect(root).toHaveURL(new RegExp(`/bookings/${booking.id}$`));
  const card = root.locator(`#booking-${booking.id}`);
  await expect(card.locator('.held-by')).toContainText('Booked by Ada');
  await expect(card.locator('.held-by')).toContainText('You see it as an admin');
  await card.getByRole('button', { name: 'Cancel booking', exact: true }).click();
  const dialog = root.getByRole('dialog');
  await expect(dialog).toContainText("'s booking of 1 × MIG 1g.24gb on lab-h100");
  await expect(dialog).not.toContainText('your booking');
  await dialog.getByRole('button', { name: 'Yes, cancel booking' }).click();
  await expect(root.locator('#notice')).toContainText('Canceled');
  expect(await state(page, booking.id)).toBe('canceled');
  await root.context().close();
  expect(rootErrors).toEqual([]);
  expect(errors).toEqual([]);
});

test('the week view draws a line at now, in the slot that holds it', async ({ page }) => {
  await signIn(page, 'ada');
  await page.goto('/calendar?view=day&tz=UTC');
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
  const now = page.locator('td.slot.now');
  expect(await now.count()).toBeGreaterThan(0);
  // Its name (and hover) says so: its aria-label, or where a block starts
  // there the words read before the block's.
  const label = (await now.first().getAttribute('aria-label')) ?? (await now.first().locator('.cell-words').textContent())!;
  expect(label).toMatch(/, now$/);
  const minutes = new Date().getUTCHours() * 60 + new Date().getUTCMinutes();
  const slotLabel = label.match(/ (\d\d):(\d\d),/)!;
  const start = Number(slotLabel[1]) * 60 + Number(slotLabel[2]);
  expect(minutes - start).toBeGreaterThanOrEqual(0);
  expect(minutes - start).toBeLessThan(16);
  const line = await now.first().evaluate((el) => getComputedStyle(el, '::after').borderTopWidth);
  expect(line).toBe('2px');
});

for (const [path, needs] of [['/reports', 'managers and admins'], ['/admin/users', 'admins']]) {
  test(`${path} for a user is a proper 403 page`, async ({ page }) => {
    await signIn(page, 'ada');
    const answer = await page.goto(path);
    expect(answer!.status()).toBe(403);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Not for your role');
    await expect(page.locator('#forbidden')).toContainText(`This page is for ${needs}. You are signed in as`);
    await expect(page.locator('#forbidden')).toContainText('(user)');
    // The page behind the refusal shows nothing, not even its error line.
    await expect(page.getByRole('alert')).toHaveCount(0);
    await expect(page.locator('main')).not.toContainText('error', { useInnerText: true });
    await expect(page.getByRole('link', { name: 'Back to the pools' })).toBeVisible();
  });
}

// Issue 61: deleting a pool asks first, with and without JavaScript;
// keeping it changes nothing.
for (const js of [true, false]) {
  test(`Delete on a pool asks first (${js ? 'hydrated' : 'without JavaScript'}); keeping it keeps it`, async ({ browser }) => {
    const page = await (await browser.newContext({ javaScriptEnabled: js, timezoneId: 'Europe/Berlin' })).newPage();
    const errors = collectErrors(page);
    await signIn(page, 'root', js);
    const name = `zz-delete-${js ? 'js' : 'plain'}`;
    const id = sql(`INSERT INTO pool (name) VALUES ('${name}') RETURNING id`);
    await page.goto(`/admin/pools/${id}`);
    if (js) await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    const dialog = page.locator(`#confirm-delete-${id}`);
    await expect(dialog).not.toBeVisible();
    await page.getByRole('button', { name: 'Delete (only without bookings)' }).click();
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText(`Delete the pool ${name}?`);
    await dialog.getByRole('button', { name: 'Keep the pool' }).click();
    await expect(dialog).not.toBeVisible();
    expect(sql(`SELECT count(*) FROM pool WHERE id = '${id}'`)).toBe('1');
    await page.getByRole('button', { name: 'Delete (only without bookings)' }).click();
    await dialog.getByRole('button', { name: `Yes, delete ${name}` }).click();
    await expect(page.locator('body')).toContainText('Deleted.');
    expect(sql(`SELECT count(*) FROM pool WHERE id = '${id}'`)).toBe('0');
    expect(errors).toEqual([]);
    await page.context().close();
  });
}
