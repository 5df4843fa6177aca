import { test, expect, Page } from '@playwright/test';
import { readFileSync, mkdirSync } from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import { collectErrors, signIn, confirmOnCard } from './login';

// Day views in UTC of days ahead, one day per test so tests never share capacity.
const day = (ahead: number) => new Date(Date.now() + ahead * 86_400_000).toISOString().slice(0, 10);
const dayView = (ahead: number) => `/calendar?date=${day(ahead)}&view=day&tz=UTC`;
const MIG = 1; // kind column in the demo pool: 0 = whole GPU, 1 = MIG 1g.24gb
const slot = (hour: number, minute = 0) => hour * 4 + minute / 15;
const cell = (page: Page, kind: number, hour: number, minute = 0) => page.locator(`#cell-0-${kind}-${slot(hour, minute)}`);
const shots = 'test-results/screenshots';
mkdirSync(shots, { recursive: true });

async function hydrated(page: Page) {
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
}

/// Fills the booking panel by hand (the way without JavaScript) and books.
async function bookWithPanel(page: Page, kind: string, quantity: number, start: string, end: string) {
  await page.selectOption('#book-kind', kind);
  await page.selectOption('#book-quantity', String(quantity));
  await page.fill('#book-start', start);
  await page.fill('#book-end', end);
  await page.click('#book-submit');
}

test.describe('hydrated', () => {
  test('drag-select a window, book one MIG slice, see it on the calendar and in My bookings', async ({ page }) => {
    const errors = collectErrors(page);
    await signIn(page, 'ada');
    await page.goto(`/calendar?date=${day(2)}&tz=UTC`);
    await hydrated(page);
    await page.screenshot({ path: `${shots}/week-view.png`, fullPage: true });
    await page.goto(dayView(2));
    await hydrated(page);
    const from = cell(page, MIG, 10);
    const to = cell(page, MIG, 10, 45);
    await from.scrollIntoViewIfNeeded();
    const a = (await from.boundingBox())!;
    const b = (await to.boundingBox())!;
    await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
    await page.mouse.down();
    await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 6 });
    await page.mouse.up();
    await expect(page.locator('#book-start')).toHaveValue(`${day(2)}T10:00`);
    await expect(page.locator('#book-end')).toHaveValue(`${day(2)}T11:00`);
    await expect(page.locator('#book-kind')).toHaveValue('nvidia.com/mig-1g.24gb');
    await expect(page.locator('#book-quantity option')).toHaveCount(4);
    await page.locator('#booking-panel').screenshot({ path: `${shots}/booking-panel.png` });
    await page.click('#book-submit');
    await expect(page.locator('#outcome')).toContainText('Booked');
    await expect(cell(page, MIG, 10, 30)).toHaveClass(/mine/);
    // Exact figures on hover and in the cell's name; no number printed in the cell.
    await expect(cell(page, MIG, 10, 30)).toHaveAttribute('aria-label', /: 3 of 4 free, yours: 1$/);
    await expect(cell(page, MIG, 10, 30)).toHaveText('');
    await expect(cell(page, MIG, 11)).toHaveAttribute('aria-label', /: 4 of 4 free$/);
    // The booking is one block from its first slot, an hour tall, that opens it.
    const block = cell(page, MIG, 10).locator('.block.mine');
    await expect(block).toContainText('You');
    await expect(block).toContainText('MIG 1g.24gb ×1 · approved');
    const [top, hour] = [(await block.boundingBox())!, (await cell(page, MIG, 10).boundingBox())!];
    expect(Math.abs(top.height - 4 * hour.height)).toBeLessThan(3);

    await page.locator('nav.account').getByRole('link', { name: 'My bookings' }).click();
    // By its start, not its time of day: other tests book ada's 10:00–11:00 on other days.
    const booked = page.locator(`#upcoming .booking-card[data-start="${day(2)}T10:00:00+00:00"]`);
    await expect(booked).toContainText('10:00–11:00');
    await expect(booked).toContainText('MIG 1g.24gb × 1');
    expect(errors).toEqual([]);
  });

  test("a click on a free slot takes the pool's default length there; so does Enter", async ({ page }) => {
    const errors = collectErrors(page);
    await signIn(page, 'ada');
    await page.goto(dayView(5));
    await hydrated(page);
    // The demo pool books an hour on a click, as a calendar's quick event.
    await cell(page, MIG, 9).scrollIntoViewIfNeeded();
    await cell(page, MIG, 9).click();
    await expect(page.locator('#book-start')).toHaveValue(`${day(5)}T09:00`);
    await expect(page.locator('#book-end')).toHaveValue(`${day(5)}T10:00`);
    await expect(cell(page, MIG, 9, 45)).toHaveAttribute('aria-selected', 'true');
    await expect(cell(page, MIG, 10)).toHaveAttribute('aria-selected', 'false');
    await expect(page.locator('#book-submit')).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(page.locator('#outcome')).toContainText('Booked');
    await expect(page.locator('#outcome')).toContainText('09:00–10:00');
    // The keyboard's way: Enter on a focused slot, then Enter on "Book".
    await cell(page, MIG, 15).focus();
    await page.keyboard.press('Enter');
    await expect(page.locator('#book-start')).toHaveValue(`${day(5)}T15:00`);
    await expect(page.locator('#book-end')).toHaveValue(`${day(5)}T16:00`);
    await page.keyboard.press('Enter');
    await expect(page.locator('#outcome')).toContainText('15:00–16:00');
    await expect(cell(page, MIG, 15, 45)).toHaveClass(/mine/);
    expect(errors).toEqual([]);
  });

  test('three clicks on Book in the same instant make one booking, and every click sees it', async ({ page }) => {
    const errors = collectErrors(page);
    await signIn(page, 'ada');
    await page.goto(dayView(13));
    await hydrated(page);
    await cell(page, MIG, 11).scrollIntoViewIfNeeded();
    await cell(page, MIG, 11).click();
    await expect(page.locator('#book-end')).toHaveValue(`${day(13)}T12:00`);
    // Three submits in one task: before the button can say "Booking…".
    await page.locator('#booking-panel form').evaluate((form: HTMLFormElement) => {
      form.requestSubmit(); form.requestSubmit(); form.requestSubmit();
    });
    await expect(page.locator('#outcome')).toContainText('Booked');
    await expect(page.locator('#outcome')).toContainText('11:00–12:00');
    const mine = await (await page.request.get('/api/v1/bookings')).json();
    const there = mine.filter((b: { mine: boolean, start: string, state: string }) =>
      b.mine && b.start === `${day(13)}T11:00:00Z` && b.state !== 'canceled');
    expect(there).toHaveLength(1);
    expect(errors).toEqual([]);
  });

  test('drag one\'s booking to move it, its edge to resize it, alt+arrows by keyboard; a full window offers the next', async ({ page, request }) => {
    const errors = collectErrors(page);
    await signIn(page, 'ada');
    const d = 7;
    await page.goto(dayView(d));
    await hydrated(page);
    await bookWithPanel(page, 'nvidia.com/mig-1g.24gb', 1, `${day(d)}T10:00`, `${day(d)}T11:00`);
    await expect(page.locator('#outcome')).toContainText('Booked');
    const drag = async (from: ReturnType<typeof cell>, to: ReturnType<typeof cell>, handle = false) => {
      // Both ends on screen: a pointer beyond the viewport is over nothing.
      await from.evaluate((el) => el.scrollIntoView({ block: 'center' }));
      const grip = handle ? from.locator('.resize-handle') : from;
      const a = (await grip.boundingBox())!;
      const b = (await to.boundingBox())!;
      await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
      await page.mouse.down();
      await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 8 });
      await page.mouse.up();
    };
    // Grabbed a slot below its start, dropped a slot below 12:00: it starts at 12:00.
    await expect(cell(page, MIG, 10, 15)).toHaveClass(/movable/);
    await drag(cell(page, MIG, 10, 15), cell(page, MIG, 12, 15));
    await expect(page.locator('#outcome')).toContainText('Moved:');
    await expect(page.locator('#outcome')).toContainText('12:00–13:00');
    await expect(cell(page, MIG, 12)).toHaveClass(/mine/);
    await expect(cell(page, MIG, 10)).not.toHaveClass(/mine/);
    // Its lower edge, dragged to 13:30, ends it at 13:45. The grid's data is
    // held back after it, as on a slow line: a key pressed before the grid
    // is drawn again moves the booking from where the resize left it.
    const slowGrid = /\/rpc\/calendar(\?|$)/;
    await page.route(slowGrid, async (route) => {
      await new Promise((r) => setTimeout(r, 1500));
      await route.continue();
    });
    await drag(cell(page, MIG, 12, 45), cell(page, MIG, 13, 30), true);
    await expect(page.locator('#outcome')).toContainText('12:00–13:45');
    await expect(cell(page, MIG, 13, 15)).not.toHaveClass(/mine/);
    // The keyboard: alt+down moves it a slot later, and the focus follows it.
    await cell(page, MIG, 12, 30).focus();
    await page.keyboard.press('Alt+ArrowDown');
    await expect(page.locator('#outcome')).toContainText('12:15–14:00');
    // The held fetches are let through before the page is reloaded.
    await page.unrouteAll({ behavior: 'wait' });
    await expect(cell(page, MIG, 12, 15)).toBeFocused();
    await page.keyboard.press('Alt+Shift+ArrowUp');
    await expect(page.locator('#outcome')).toContainText('12:15–13:45');
    // Someone else takes every slice from 16:00 to 17:00: dropped there, it is
    // refused with the earliest window of its length that fits, which moves it.
    const token = readFileSync('test-results-token.txt', 'utf8').trim();
    const pools = await (await request.get('/api/v1/pools', { headers: { Authorization: `Bearer ${token}` } })).json();
    const blocker = await request.post('/api/v1/bookings', {
      headers: { Authorization: `Bearer ${token}` },
      data: { pool_id: pools[0].id, kind: 'nvidia.com/mig-1g.24gb', quantity: 4,
              start: `${day(d)}T16:00:00Z`, end: `${day(d)}T17:00:00Z`, mode: 'inference' },
    });
    expect(blocker.status()).toBe(201);
    await page.reload();
    await hydrated(page);
    await drag(cell(page, MIG, 12, 30), cell(page, MIG, 16, 15));
    await expect(page.locator('#outcome')).toContainText('Not moved');
    await expect(page.locator('#move-suggestion')).toContainText('17:00–18:30');
    await page.locator('#move-suggestion').click();
    await expect(page.locator('#outcome')).toContainText('Moved:');
    await expect(cell(page, MIG, 17)).toHaveClass(/mine/);
    const axe = await new AxeBuilder({ page }).include('.calendar').analyze();
    expect(axe.violations).toEqual([]);
    expect(errors).toEqual([]);
  });

  test('keyboard only: focus a slot, shift+arrows, Enter, Enter', async ({ page }) => {
    await signIn(page, 'ada');
    await page.goto(dayView(3));
    await hydrated(page);
    await cell(page, MIG, 12).focus();
    for (let i = 0; i < 3; i++) await page.keyboard.press('Shift+ArrowDown');
    await page.keyboard.press('Enter');
    await expect(page.locator('#book-start')).toHaveValue(`${day(3)}T12:00`);
    await expect(page.locator('#book-end')).toHaveValue(`${day(3)}T13:00`);
    await expect(page.locator('#book-submit')).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(page.locator('#outcome')).toContainText('Booked');
    await expect(cell(page, MIG, 12, 45)).toHaveClass(/mine/);
  });
});

for (const js of [true, false]) {
  test.describe(js ? 'forms, hydrated' : 'forms, without JavaScript', () => {
    test.use({ javaScriptEnabled: js });
    const ahead = js ? 0 : 1; // each run books on days of its own

    test('a booking over capacity names the conflict and offers the next free window, which books', async ({ page }) => {
      await signIn(page, 'ada', js);
      const d = 4 + ahead * 10;
      await page.goto(dayView(d));
      if (js) await hydrated(page);
      await bookWithPanel(page, 'nvidia.com/gpu', 1, `${day(d)}T10:00`, `${day(d)}T12:00`);
      await expect(page.locator('#outcome')).toContainText('Booked');
      await bookWithPanel(page, 'nvidia.com/gpu', 1, `${day(d)}T10:00`, `${day(d)}T12:00`);
      const refused = page.locator('#outcome');
      await expect(refused).toContainText('not enough free capacity: 1 of 1 units are already booked');
      await expect(refused).toContainText('12:00–14:00');
      await page.click('#book-suggestion');
      await expect(page.locator('#outcome')).toContainText('Booked');
      await expect(page.locator('#outcome')).toContainText('12:00–14:00');
      await expect(cell(page, 0, 13)).toHaveClass(/mine/);
    });

    test('find a slot returns windows and books one', async ({ page }) => {
      await signIn(page, 'ada', js);
      const d = 6 + ahead * 10;
      await page.goto('/find?tz=UTC');
      if (js) await hydrated(page);
      await page.selectOption('#find-kind', 'nvidia.com/gpu');
      await page.fill('#find-quantity', '1');
      await page.fill('#find-duration', '90');
      await page.fill('#find-earliest', `${day(d)}T09:00`);
      await page.fill('#find-latest', `${day(d)}T18:00`);
      await page.click('#find-submit');
      const first = page.locator('#found li').first();
      await expect(first).toContainText('09:00–10:30');
      await first.getByRole('button').click();
      await expect(page.locator('#outcome')).toContainText('Booked');
      await expect(page.locator('#outcome')).toContainText('09:00–10:30');
      await page.goto(dayView(d));
      await expect(cell(page, 0, 9, 30)).toHaveClass(/mine/);
    });

    test('extend offers only ends that fit; cancel frees the lane at once', async ({ page, request }) => {
      await signIn(page, 'ada', js);
      const d = 8 + ahead * 10;
      await page.goto(dayView(d));
      if (js) await hydrated(page);
      await bookWithPanel(page, 'nvidia.com/mig-1g.24gb', 1, `${day(d)}T14:00`, `${day(d)}T15:00`);
      await expect(page.locator('#outcome')).toContainText('Booked');
      // Someone else fills every slice from 16:00, so ada can reach 16:00 at most.
      const token = readFileSync('test-results-token.txt', 'utf8').trim();
      const pools = await (await request.get('/api/v1/pools', { headers: { Authorization: `Bearer ${token}` } })).json();
      const blocker = await request.post('/api/v1/bookings', {
        headers: { Authorization: `Bearer ${token}` },
        data: { pool_id: pools[0].id, kind: 'nvidia.com/mig-1g.24gb', quantity: 4,
                start: `${day(d)}T16:00:00Z`, end: `${day(d)}T17:00:00Z`, mode: 'inference' },
      });
      expect(blocker.status()).toBe(201);

      await page.goto('/bookings?tz=UTC');
      if (js) await hydrated(page);
      const card = page.locator(`.booking-card[data-start="${day(d)}T14:00:00+00:00"]`);
      const ends = await card.locator('select.extend-to option').allTextContents();
      expect(ends.map((e) => e.slice(-5))).toEqual(['15:15', '15:30', '16:00']);
      await card.locator('select.extend-to').selectOption({ label: ends[2] });
      await card.getByRole('button', { name: 'Extend', exact: true }).click();
      await expect(page.locator('#notice')).toContainText('Extended');
      await expect(card).toContainText('14:00–16:00');
      await confirmOnCard(page, card, 'Cancel booking', 'Yes, cancel booking');
      await expect(page.locator('#notice')).toContainText('Canceled');

      await page.goto(dayView(d));
      await expect(cell(page, MIG, 14)).toHaveAttribute('aria-label', /: 4 of 4 free$/);
      await expect(cell(page, MIG, 14)).not.toHaveClass(/mine/);
    });
  });
}

test('a window that starts now goes live on the simulated cluster and says so', async ({ page }) => {
  await signIn(page, 'ada');
  const quarter = 15 * 60 * 1000;
  const start = new Date(Math.floor(Date.now() / quarter) * quarter);
  const local = (d: Date) => d.toISOString().slice(0, 16);
  await page.goto(`/calendar?date=${local(start).slice(0, 10)}&view=day&tz=UTC`);
  await hydrated(page);
  await bookWithPanel(page, 'nvidia.com/mig-1g.24gb', 1, local(start), local(new Date(start.getTime() + 2 * quarter)));
  await expect(page.locator('#outcome')).toContainText('Booked');
  await expect.poll(async () => {
    await page.goto('/bookings?tz=UTC');
    return page.locator('#live').innerText();
  }, { timeout: 15_000 }).toContain('Simulated cluster — no workspace is running');
  // This booking's card, by its start: other specs may leave ada a live one.
  const card = page.locator(`#live .booking-card[data-start="${start.toISOString().slice(0, 19)}+00:00"]`);
  await expect(card.locator('.badge')).toHaveText('active');
  // Each step the worker took, all done, and where the workspace would be.
  const steps = card.locator('ol.steps li');
  await expect(steps).toHaveCount(7);
  await expect(steps.first()).toContainText('Namespace');
  await expect(steps.last()).toContainText('Ready');
  await expect(card.locator('ol.steps li.step-done')).toHaveCount(7);
  await expect(card).toContainText(/It would be at https:\/\/berth-[a-z0-9-]+\.berth\.local\//);
  await card.getByRole('link', { name: 'What the worker applies' }).click();
  await expect(page.locator('#manifests')).toContainText('"kind": "ResourceQuota"');
});

// The calendar's chrome reads whole: the legend's empty swatches show their
// hatching, and a week lane's kind is not cut to "MIG …".
test('the legend shows its hatching and lanes name their kind in full, at 1440 and 390 px', async ({ browser }) => {
  for (const width of [1440, 390]) {
    const page = await (await browser.newContext({ timezoneId: 'Europe/Berlin', viewport: { width, height: 900 } })).newPage();
    const errors = collectErrors(page);
    await signIn(page, 'ada');
    await page.goto('/calendar?pool=lab-h100&view=week');
    await hydrated(page);
    for (const swatch of ['.legend .swatch.blackout', '.legend .swatch.past']) {
      const look = await page.locator(swatch).evaluate((el) => {
        const style = getComputedStyle(el);
        return { image: style.backgroundImage, height: el.getBoundingClientRect().height };
      });
      expect(look.image, swatch).toContain('repeating-linear-gradient');
      expect(look.height, swatch).toBeGreaterThan(10);
    }
    const heads = page.locator('th.kind-head');
    expect(await heads.count()).toBeGreaterThan(0);
    for (const head of await heads.all()) {
      const cut = await head.evaluate((el) => el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1);
      expect(cut, await head.textContent() ?? '').toBe(false);
    }
    expect(errors).toEqual([]);
    await page.context().close();
  }
});
