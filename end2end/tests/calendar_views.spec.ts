import { test, expect, Browser } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import AxeBuilder from '@axe-core/playwright';
import { collectErrors, signIn } from './login';

// The calendar's month and agenda: reached from the view switch, read with
// the keyboard, passing axe; a phone opens the calendar as its agenda,
// with and without JavaScript. New York time, 1440 and 390 px.

function sql(statement: string): string {
  return execFileSync('psql', [process.env.BERTH_E2E_DATABASE_URL!, '-v', 'ON_ERROR_STOP=1', '-qAt', '-c', statement],
    { encoding: 'utf8' }).trim();
}

const ahead = 9;
const PHONE = 'Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36';
const date = new Date(Date.now() + ahead * 86_400_000).toISOString().slice(0, 10);

async function page(browser: Browser, login: string, options: { width: number; mobile?: boolean; js?: boolean }) {
  const context = await browser.newContext({
    timezoneId: 'America/New_York', viewport: { width: options.width, height: 900 },
    isMobile: options.mobile ?? false, hasTouch: options.mobile ?? false, javaScriptEnabled: options.js ?? true,
    // A phone's browser names itself so (Chromium on Android).
    ...(options.mobile ? { userAgent: PHONE } : {}),
  });
  const p = await context.newPage();
  const errors = collectErrors(p);
  await signIn(p, login, options.js ?? true);
  return { p, errors };
}

/// Ada's booking on lab-l40s, 10:00–11:00 UTC `ahead` days out (05:00–06:00 in New York).
function adasBooking(): [string, string] {
  const row = sql(`
    INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state, note)
    SELECT k.pool_id, k.kind, u.id, m.tenant_id, 1, 'interactive', '${date}T10:00Z', '${date}T11:00Z', 'approved',
           'agenda e2e'
    FROM pool_kind k JOIN pool p ON p.id = k.pool_id, app_user u JOIN membership m ON m.user_id = u.id
    WHERE p.name = 'lab-l40s' AND u.name = 'Ada Lovelace' LIMIT 1
    RETURNING id, pool_id`);
  const [id, pool] = row.split('|');
  return [id, pool];
}

test('the month and the agenda show one\'s booking and open it, by keyboard too, at both widths', async ({ browser }) => {
  await (await page(browser, 'ada', { width: 1440 })).p.context().close();
  const [id, pool] = adasBooking();
  try {
    for (const width of [1440, 390]) {
      const { p, errors } = await page(browser, 'ada', { width });
      await p.goto(`/calendar?pool=${pool}&view=week&date=${date}`);
      await expect(p.locator('main[data-hydrated="true"]')).toBeAttached();
      await expect(p.locator('#view-week')).toHaveAttribute('aria-current', 'page');
      await p.locator('#view-month').click();
      await expect(p).toHaveURL(/view=month/);
      const month = p.locator('#month');
      await expect(month).toBeVisible();
      await expect(month.locator('thead th').first()).toHaveText('Mon');
      const day = month.locator('td').filter({ hasText: 'agenda e2e' });
      await expect(day).toHaveCount(1);
      await expect(day).toContainText('05:00 agenda e2e');
      await expect(day.locator('a.day-link')).toHaveAttribute('aria-label', /: \d+ % booked, 1 booking of yours$/);
      expect((await new AxeBuilder({ page: p }).include('main').analyze()).violations).toEqual([]);
      expect(await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth))
        .toBeLessThanOrEqual(0);
      // The keyboard opens the day's slots.
      await day.locator('a.day-link').focus();
      await p.keyboard.press('Enter');
      await expect(p).toHaveURL(new RegExp(`date=${date}&view=day`));
      await expect(p.locator('table.calendar')).toBeVisible();

      await p.locator('#view-agenda').click();
      await expect(p).toHaveURL(/view=agenda/);
      const entry = p.locator('.agenda-entry.mine').filter({ hasText: 'agenda e2e' });
      await expect(entry).toContainText('05:00–06:00');
      await expect(entry).toContainText('GPU ×1');
      expect((await new AxeBuilder({ page: p }).include('main').analyze()).violations).toEqual([]);
      await entry.getByRole('link', { name: 'agenda e2e' }).focus();
      await p.keyboard.press('Enter');
      await expect(p).toHaveURL(new RegExp(`/bookings/${id}`));
      expect(errors).toEqual([]);
      await p.context().close();
    }
    // Another tenant's member sees the hour taken, not whose or why.
    const { p } = await page(browser, 'bob', { width: 1440 });
    await p.goto(`/calendar?pool=${pool}&view=agenda&date=${date}`);
    await expect(p.locator('.agenda-entry.others').filter({ hasText: '05:00–06:00' })).toContainText('Booked');
    await expect(p.locator('main')).not.toContainText('agenda e2e');
    await p.context().close();
  } finally {
    sql(`UPDATE booking SET state = 'canceled' WHERE id = '${id}'`);
  }
});

for (const js of [true, false]) {
  test(`a phone opens the calendar as its agenda (${js ? 'hydrated' : 'without JavaScript'}); a desktop as its week`, async ({ browser }) => {
    const phone = await page(browser, 'ada', { width: 390, mobile: true, js });
    await phone.p.goto('/calendar');
    if (js) await expect(phone.p.locator('main[data-hydrated="true"]')).toBeAttached();
    await expect(phone.p.locator('#view-agenda')).toHaveAttribute('aria-current', 'page');
    await expect(phone.p.locator('table.calendar')).toHaveCount(0);
    await expect(phone.p.locator('#agenda, #agenda-empty').first()).toBeVisible();
    expect(await phone.p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth))
      .toBeLessThanOrEqual(0);
    // The week is one tap away.
    await phone.p.locator('#view-week').click();
    await expect(phone.p.locator('table.calendar')).toBeVisible();
    expect(phone.errors).toEqual([]);
    await phone.p.context().close();
    const desk = await page(browser, 'ada', { width: 390, js });
    await desk.p.goto('/calendar');
    await expect(desk.p.locator('#view-week')).toHaveAttribute('aria-current', 'page');
    await desk.p.context().close();
  });
}
