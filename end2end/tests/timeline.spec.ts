import { test, expect } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { collectErrors, signIn, sql } from './login';

// Issue 61: the resource timeline. The home page draws the coming week
// across pools: a row per pool's kind, each hour as tall as the share
// booked, its exact figure on hover; local days as gridlines. Berlin time
// (UTC+1 in winter), 1440 and 390 px.

const day = new Date(Date.now() + 6 * 86_400_000).toISOString().slice(0, 10);

for (const width of [1440, 390]) {
  test(`the home page's week across pools shows a booking's hours with their figure at ${width} px`, async ({ browser }) => {
    // Two of lab-h100's four 1g.24gb slices, 03:00–05:00 UTC (04:00–06:00 in Berlin).
    const id = sql(`
      INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state, note)
      SELECT k.pool_id, k.kind, u.id, m.tenant_id, 2, 'interactive', '${day}T03:00:00Z', '${day}T05:00:00Z',
             'approved', 'timeline e2e ${width}'
      FROM pool_kind k JOIN pool p ON p.id = k.pool_id, app_user u JOIN membership m ON m.user_id = u.id
      WHERE p.name = 'lab-h100' AND k.kind = 'nvidia.com/mig-1g.24gb' AND u.email = 'e2e@berth.test' LIMIT 1
      RETURNING id`).split('\n')[0];
    const context = await browser.newContext({ timezoneId: 'Europe/Berlin', viewport: { width, height: 900 } });
    const page = await context.newPage();
    const errors = collectErrors(page);
    try {
      await signIn(page, 'ada');
      await page.goto('/');
      await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
      const timeline = page.locator('#week-timeline');
      await expect(page.getByRole('heading', { name: 'The week across pools' })).toBeVisible();
      await expect(timeline.locator('svg')).toHaveAttribute('aria-label', /^The week from .* across \d+ pool kinds/);
      await expect(timeline.locator('text.row-pool', { hasText: 'lab-h100' }).first()).toBeAttached();
      // The booking's two Berlin hours, each with its figure (others may book there too).
      const label = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', weekday: 'short', day: '2-digit' })
        .format(new Date(`${day}T12:00:00Z`)).replace(',', '');
      for (const hour of ['04:00–05:00', '05:00–06:00']) {
        const title = timeline.locator('rect.booked title', { hasText: `lab-h100 · MIG 1g.24gb, ${label} ${hour}:` });
        await expect(title).toHaveCount(1);
        await expect(title).toHaveText(/: [234] of 4 booked$/);
      }
      // The hour before is not drawn as booked by this booking.
      await expect(timeline.locator('rect.booked title', { hasText: `lab-h100 · MIG 1g.24gb, ${label} 03:00–04:00: ` })).toHaveCount(0);
      // A day's gridline is named by the local day.
      await expect(timeline.locator('text.tick', { hasText: label })).toHaveCount(1);
      // The figure scrolls inside its own box on a phone, never the page.
      const [scroll, client] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
      expect(scroll).toBeLessThanOrEqual(client);
      // No text under 11 px, as drawn: its font size times the SVG's scale.
      const sizes = await timeline.locator('text').evaluateAll((texts) => texts.map((t) => {
        const scale = (t as SVGTextElement).ownerSVGElement!.getScreenCTM()!.a;
        return parseFloat(getComputedStyle(t).fontSize) * scale;
      }));
      expect(Math.min(...sizes), `at ${width} px`).toBeGreaterThanOrEqual(11);
      await timeline.screenshot({ path: `test-results/screenshots/timeline-${width}.png` });
      expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      sql(`UPDATE booking SET state = 'canceled' WHERE id = '${id}'`);
      await context.close();
    }
  });
}
