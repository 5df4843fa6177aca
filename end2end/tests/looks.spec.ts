import { test, expect, Browser, Locator, Page } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { collectErrors, signIn, sql } from './login';

// Looks are tested: the key pages photographed at 1440 and 390 px in
// Berlin time and compared with the pictures checked in beside this file
// (looks.spec.ts-snapshots/), so a change of look fails until someone has
// looked at it and run `npx playwright test looks --update-snapshots`.
//
// What is photographed is the demo's month of history (global-setup.ts
// ends it on 1 Nov 2025, a past year), and only the part of each page that
// this spec alone decides: the other specs add pools, clusters and tenants,
// which the pickers and lists around it would show.

const WIDTHS = [1440, 390];
// A few pixels of slack, not a share: a share of a whole page (0.2 % was
// 1,160 pixels of My bookings) let a button move across the header unseen.
// 48: one changed digit is about 80 pixels; the narrow week's clipped kind
// labels have once drawn 29 pixels differently on a busy machine.
const looks = { animations: 'disabled' as const, caret: 'hide' as const, maxDiffPixels: 48 };

async function open(browser: Browser, login: string, width: number) {
  const context = await browser.newContext({ timezoneId: 'Europe/Berlin', viewport: { width, height: 900 } });
  const page = await context.newPage();
  const errors = collectErrors(page);
  await signIn(page, login);
  return { page, errors };
}

async function visit(page: Page, path: string) {
  await page.goto(path);
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
  await page.evaluate(() => document.fonts.ready);
}

/// The page passes axe and its part looks as it did. Before the picture,
/// whatever comes before the part in the page's main is put away: notices
/// and lists the other specs leave (a down cluster, more pools) would move
/// the part by a fraction of a pixel, which redraws every glyph in it.
async function photograph(page: Page, part: Locator, name: string, moving?: Locator) {
  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target).join(', ')}`)).toEqual([]);
  const aside = (element: Element, display: string) => {
    for (let node: Element | null = element; node && node.tagName !== 'MAIN'; node = node.parentElement) {
      for (let before = node.previousElementSibling; before; before = before.previousElementSibling) {
        (before as HTMLElement).style.display = display;
      }
    }
    window.scrollTo(0, 0);
  };
  await part.evaluate(aside, 'none');
  // What moves with the day the test runs is hidden, keeping its place (a
  // mask would draw a box as wide as today's text).
  await moving?.evaluate((element) => { (element as HTMLElement).style.visibility = 'hidden'; });
  await expect(part).toHaveScreenshot(name, looks);
  // Back, for the next picture's accessibility check.
  await part.evaluate(aside, '');
}

const lab = () => sql("SELECT id FROM pool WHERE name = 'lab-h100'");

for (const width of WIDTHS) {
  test(`the calendar's week, day, month and agenda of the demo month look as they did at ${width} px`, async ({ browser }) => {
    const { page, errors } = await open(browser, 'root', width);
    const pool = lab();
    // The agenda of two weeks in the past lists what was booked then.
    for (const view of ['week', 'day', 'month', 'agenda']) {
      await visit(page, `/calendar?pool=${pool}&view=${view}&date=2025-10-15`);
      const part = page.locator({ month: '#month', agenda: '#agenda' }[view] ?? '#calendar-scroll');
      // The month shades each day by the share booked; the grid and the agenda name who booked.
      await expect(part).toContainText(view === 'month' ? 'the share of the pool booked' : 'Grace Demo');
      if (view === 'month') {
        // Each day of the month's history draws its share, not an empty bar.
        const drawn = await part.locator('td:not(.other-month) .booked-fill')
          .evaluateAll((fills) => fills.filter((f) => f.getBoundingClientRect().width > 0).length);
        expect(drawn).toBeGreaterThan(20);
      }
      await photograph(page, part, `calendar-${view}-${width}.png`);
    }
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test(`My bookings and the report of the demo month look as they did at ${width} px`, async ({ browser }) => {
    const { page, errors } = await open(browser, 'demo', width);
    // Grace's list: one booking ahead and two of the last days (one ended,
    // one canceled), at fixed hours of Berlin's day. Their days move with
    // the day the test runs, so every day a card names (its window, its
    // countdown, until when its home is kept, the ends it can be extended
    // to) is written over with a fixed day of the same form before the
    // picture.
    const grace = `FROM pool p, app_user u, tenant t WHERE p.name = 'lab-h100' AND u.email = 'grace@berth.local' AND t.slug = 'demo'`;
    const berlin = (days: number, hours: number) =>
      `(date_trunc('day', now() AT TIME ZONE 'Europe/Berlin') + interval '${days} days ${hours} hours') AT TIME ZONE 'Europe/Berlin'`;
    for (const [days, from, to, state, kind, note] of [
      [10, 10, 12, 'approved', 'nvidia.com/gpu', 'Evaluation of the 8B against last week'],
      [-3, 14, 17, 'completed', 'nvidia.com/mig-1g.24gb', 'Tokenizer sweep'],
      [-5, 9, 11, 'canceled', 'nvidia.com/mig-1g.24gb', ''],
    ] as const) {
      sql(`INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state, image, note)
           SELECT p.id, '${kind}', u.id, t.id, 1, 'interactive', ${berlin(days, from)}, ${berlin(days, to)}, '${state}',
                  p.images[1], '${note}' ${grace}
           AND NOT EXISTS (SELECT 1 FROM booking b WHERE b.user_id = u.id AND b.starts_at = ${berlin(days, from)})`);
    }
    await visit(page, '/bookings');
    const mine = page.locator('main');
    await expect(mine).toContainText('Nothing running right now.');
    await expect(mine.locator('.booking-card')).toHaveCount(3);
    await mine.locator('.booking-card').evaluateAll((cards) => {
      const fixed = [['Thu 10 Dec 10:00–12:00', 'starts in 9 days'], ['Fri 27 Nov 14:00–17:00', ''], ['Wed 25 Nov 09:00–11:00', '']];
      const day = /(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)( \d{4})?/g;
      cards.forEach((card, i) => {
        card.querySelector('.when')!.textContent = fixed[i][0];
        card.querySelector('.countdown')!.textContent = fixed[i][1];
        for (const words of card.querySelectorAll('.persistence, option')) {
          words.textContent = words.textContent!.replace(day, 'Sat 09 Jan 2027');
        }
      });
    });
    await photograph(page, mine, `my-bookings-${width}.png`);
    // A card, on its booking's page: a booking of Grace's in a fixed future
    // year (the list holds only the next 400 days, whose dates move with
    // the day the test runs). Its countdown ("starts in 1190 days") is the
    // one part that moves, and is hidden; it ends the card's first line.
    const id = sql(`INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state, image, note)
         SELECT p.id, 'nvidia.com/mig-1g.24gb', u.id, t.id, 2, 'interactive', timestamptz '2030-03-04 09:00Z',
                timestamptz '2030-03-04 11:00Z', 'approved', p.images[1], 'LoRA of the 8B on the support tickets'
         FROM pool p, app_user u, tenant t
         WHERE p.name = 'lab-h100' AND u.email = 'grace@berth.local' AND t.slug = 'demo'
         RETURNING id`);
    await visit(page, `/bookings/${id}`);
    const card = page.locator('.booking-card');
    await expect(card).toContainText('Mon 04 Mar 2030 10:00–12:00');
    await photograph(page, card, `booking-card-${width}.png`, card.locator('.countdown'));
    await page.context().close();

    const manager = await open(browser, 'mia', width);
    await visit(manager.page, '/reports?group=tenant&period=month&date=2025-10-01');
    await expect(manager.page.locator('#report-demo')).toContainText('Demo data: the bookings from Thu 02 Oct 2025 to Fri 31 Oct 2025');
    // The table's own scrolling box: at 390 px the table is wider than the screen.
    await photograph(manager.page, manager.page.locator('.table-scroll:has(#report-table)'), `report-table-${width}.png`);
    await photograph(manager.page, manager.page.locator('#trend-chart'), `report-trend-${width}.png`);
    expect([...errors, ...manager.errors]).toEqual([]);
    await manager.page.context().close();
  });

  test(`the dashboard and the pool form look as they did at ${width} px`, async ({ browser }) => {
    const { page, errors } = await open(browser, 'root', width);
    await visit(page, '/dashboard?tenant=demo');
    // The demo notice only: the pickers list the tenants and clusters other
    // specs add, and the week's budget and "Upcoming" hold the demo's booking
    // of tomorrow, which lies in this week from Monday to Saturday only.
    await expect(page.locator('#dashboard-demo')).toContainText('from Thu 02 Oct 2025 to Fri 31 Oct 2025');
    await photograph(page, page.locator('#dashboard-demo'), `dashboard-demo-${width}.png`);
    await visit(page, '/admin/pools');
    await photograph(page, page.locator('#new-pool'), `pool-form-${width}.png`);
    expect(errors).toEqual([]);
    await page.context().close();
  });
}
