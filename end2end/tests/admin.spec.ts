import { test, expect, Browser, Page } from '@playwright/test';
import { mkdirSync, readFileSync } from 'node:fs';
import { collectErrors, signIn, confirmOnCard } from './login';

// The admin console, hydrated and without JavaScript: approvals with a
// comment the requester reads, pools and blackouts, a tenant quota and the
// refusal it causes, the waitlist, the worker page, and the audit log
// filtered and downloaded as CSV.
const day = (ahead: number) => new Date(Date.now() + ahead * 86_400_000).toISOString().slice(0, 10);
const shots = 'test-results/screenshots';
mkdirSync(shots, { recursive: true });

async function hydrated(page: Page) {
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
}

async function as(browser: Browser, login: string, js: boolean): Promise<Page> {
  const context = await browser.newContext({ javaScriptEnabled: js });
  const page = await context.newPage();
  await signIn(page, login, js);
  return page;
}

async function poolId(page: Page, name: string): Promise<string> {
  const pools = await (await page.request.get('/api/v1/pools')).json();
  return pools.find((p: { name: string }) => p.name === name).id;
}

async function book(page: Page, js: boolean, pool: string, kind: string, date: string, from: string, to: string) {
  await page.goto(`/calendar?pool=${pool}&date=${date}&view=day&tz=UTC`);
  if (js) await hydrated(page);
  await page.selectOption('#book-kind', kind);
  await page.selectOption('#book-quantity', '1');
  await page.fill('#book-start', `${date}T${from}`);
  await page.fill('#book-end', `${date}T${to}`);
  await page.click('#book-submit');
}

for (const js of [true, false]) {
  test.describe(js ? 'admin console, hydrated' : 'admin console, without JavaScript', () => {
    const d = js ? 20 : 21;

    test('approve one booking and reject another with a comment the requester reads', async ({ browser }) => {
      const ada = await as(browser, 'ada', js);
      const errors = collectErrors(ada);
      const l40s = await poolId(ada, 'lab-l40s');
      await book(ada, js, l40s, 'nvidia.com/gpu', day(d), '07:00', '08:00');
      await expect(ada.locator('#outcome')).toContainText('Waiting for approval');
      await book(ada, js, l40s, 'nvidia.com/gpu', day(d), '15:00', '16:00');
      await expect(ada.locator('#outcome')).toContainText('Waiting for approval');

      const root = await as(browser, 'root', js);
      const rootErrors = collectErrors(root);
      await root.locator('#admin-menu').click();
      await expect(root.locator('#approvals-count')).toBeVisible();
      await root.locator('#approvals-nav').click();
      if (js) await hydrated(root);
      const first = root.locator('#approval-list tr').filter({ hasText: 'ada@example.test' }).filter({ hasText: `${time(day(d), '07:00')}` });
      await expect(first).toContainText('0 of 2 booked; 1 with this request');
      // Nothing chosen: said in the form, once.
      await root.click('#decide');
      await expect(root.locator('#approval-ids-error')).toHaveText('Chosen requests: choose 1 to 200 bookings.');
      await expect(root.locator('#decisions')).toHaveCount(0);
      await first.getByRole('checkbox').check();
      await root.click('#decide');
      await expect(root.locator('#decisions')).toContainText('approved');
      // Named by whose booking, where and when, not by id.
      await expect(root.locator('#decisions')).toContainText(/Ada Lovelace's booking on .*, .* 07:00–\d\d:\d\d: approved/);
      await expect(root.locator('#decisions')).not.toContainText(/[0-9a-f]{8}-[0-9a-f]{4}-/);
      const second = root.locator('#approval-list tr').filter({ hasText: 'ada@example.test' }).filter({ hasText: `${time(day(d), '15:00')}` });
      await second.getByRole('checkbox').check();
      await root.getByRole('radio', { name: 'Reject' }).check();
      await root.click('#decide');
      // A rejection without a comment: said beside the comment, not once per booking.
      await expect(root.locator('#approval-comment-error')).toHaveText('Comment must say why: the requester reads it.');
      await expect(root.locator('#approval-comment')).toHaveAttribute('aria-describedby', 'approval-comment-error');
      await expect(root.locator('#approval-ids-error')).toHaveCount(0);
      await expect(root.locator('#decisions')).toHaveCount(0);
      await second.getByRole('checkbox').check();
      await root.getByRole('radio', { name: 'Reject' }).check();
      await root.fill('#approval-comment', `the cards are serviced on ${day(d)}`);
      await root.click('#decide');
      await expect(root.locator('#decisions')).toContainText('rejected');
      await root.screenshot({ path: `${shots}/admin-approvals-${js ? 'js' : 'nojs'}.png`, fullPage: true });

      await ada.goto('/bookings?tz=UTC');
      await expect(ada.locator('.decision', { hasText: `Rejected: the cards are serviced on ${day(d)}` })).toBeVisible();
      expect(errors).toEqual([]);
      expect(rootErrors).toEqual([]);
      await ada.context().close();
      await root.context().close();
    });

    test('create a pool with two kinds and book it; lowering a capacity below what is booked names the bookings', async ({ browser }) => {
      const root = await as(browser, 'root', js);
      const errors = collectErrors(root);
      // Named to sort after the demo pool, which other tests expect first.
      const name = `zz-a100-${js ? 'js' : 'nojs'}`;
      await root.goto('/admin/pools');
      if (js) await hydrated(root);
      const form = root.locator('#new-pool');
      await form.getByLabel('Name', { exact: true }).fill(name);
      await form.getByLabel('GPU model').fill('NVIDIA A100 80GB');
      await form.getByLabel('Kind, kind row 1').fill('nvidia.com/gpu');
      await form.getByLabel('Physical units, kind row 1').fill('2');
      await form.getByLabel('Kind, kind row 2').fill('nvidia.com/mig-3g.40gb');
      await form.getByLabel('Physical units, kind row 2').fill('3');
      await form.getByLabel('CPU millicores, kind row 2').fill('8000');
      // The MIG kind lends its idle booked units to Kueue backfill Jobs in a
      // namespace the pool names, and the pool's nodes come up an hour ahead.
      await form.getByLabel('Lends idle units, kind row 2').check();
      const backfill = `batch-${js ? 'js' : 'nojs'}`;
      await form.getByLabel(/^Backfill namespace/).fill(backfill);
      await form.getByLabel(/^Nodes ready ahead/).fill('60');
      // Hydrated, the preview follows the typing; without JavaScript it shows the saved values below.
      if (js) await expect(form.locator('#quota-preview')).toContainText('8 cores');
      await form.getByRole('button', { name: 'Create pool' }).click();
      // Wait for the new pool's page: hydrated, the form's own preview already
      // says "8 cores" before the navigation lands.
      await expect(root).toHaveURL(/admin\/pools\/[0-9a-f-]{36}/);
      await expect(root.locator('#notice')).toContainText('Saved.');
      await expect(root.locator('#quota-preview')).toContainText('8 cores');
      const saved = root.locator('#edit-pool');
      await expect(saved.getByLabel('Lends idle units, kind row 2')).toBeChecked();
      await expect(saved.getByLabel('Lends idle units, kind row 1')).not.toBeChecked();
      await expect(saved.getByLabel(/^Backfill namespace/)).toHaveValue(backfill);
      await expect(saved.getByLabel(/^Nodes ready ahead/)).toHaveValue('60');
      const id = root.url().match(/admin\/pools\/([0-9a-f-]{36})/)![1];
      await root.screenshot({ path: `${shots}/admin-pool-${js ? 'js' : 'nojs'}.png`, fullPage: true });

      const ada = await as(browser, 'ada', js);
      await book(ada, js, id, 'nvidia.com/gpu', day(d), '10:00', '12:00');
      await expect(ada.locator('#outcome')).toContainText('Booked');
      await expect(ada.getByRole('heading', { name: new RegExp(name) })).toBeVisible();
      await book(ada, js, id, 'nvidia.com/gpu', day(d), '11:00', '13:00');
      await expect(ada.locator('#outcome')).toContainText('Booked');

      await root.goto(`/admin/pools/${id}`);
      if (js) await hydrated(root);
      await root.locator('#edit-pool').getByLabel('Physical units, kind row 1').fill('1');
      await root.locator('#edit-pool').getByRole('button', { name: 'Save' }).click();
      const refusal = root.locator('#notice');
      await expect(refusal).toContainText('2 units are booked at once, more than the new capacity of 1');
      await expect(refusal).toContainText(`ada@example.test`);
      await expect(refusal).toContainText('10:00–12:00');
      await expect(refusal).toContainText('11:00–13:00');

      // A maintenance window over both bookings: listed first, then canceled.
      await root.goto(`/admin/pools/${id}`);
      if (js) await hydrated(root);
      await root.fill('#blackout-start', `${day(d)}T09:00`);
      await root.fill('#blackout-end', `${day(d)}T14:00`);
      await root.fill('#blackout-reason', 'driver upgrade');
      await root.click('#blackout-submit');
      await expect(root.locator('#blackout-outcome')).toContainText('2 bookings overlap this window');
      // Named by who, what and when, not by id; and shown where the admin is looking.
      await expect(root.locator('#blackout-outcome')).toContainText("ada@example.test's");
      await expect(root.locator('#blackout-outcome')).toContainText('10:00–12:00 UTC');
      await expect(root.locator('#blackout-outcome')).not.toContainText(/[0-9a-f]{8}-[0-9a-f]{4}-/);
      await expect(root.locator('#blackout-outcome')).toBeInViewport();
      await root.fill('#blackout-start', `${day(d)}T09:00`);
      await root.fill('#blackout-end', `${day(d)}T14:00`);
      await root.fill('#blackout-reason', 'driver upgrade');
      await root.getByRole('radio', { name: 'cancel them' }).check();
      await root.click('#blackout-submit');
      await expect(root.locator('#blackout-outcome')).toContainText('2 overlapping bookings canceled');
      await expect(root.locator('#blackout-list')).toContainText('driver upgrade');
      await ada.goto(`/calendar?pool=${id}&date=${day(d)}&view=day&tz=UTC`);
      const hatched = ada.locator('#cell-0-0-44');
      await expect(hatched).toHaveClass(/blackout/);
      await expect(hatched).toHaveAttribute('aria-label', /closed for maintenance: driver upgrade/);
      // A block from 09:00 says what it is.
      const block = ada.locator('#cell-0-0-36 .block.maintenance');
      await expect(block).toContainText('Maintenance');
      await expect(block).toContainText('driver upgrade');
      // Idle reclaim: a threshold out of range is said beside its field,
      // what was typed kept, the other numbers unmarked; a good one saves.
      await root.fill('#idle-threshold', '0');
      await root.click('#idle-save');
      const threshold = root.locator('#idle-policy-threshold_pct-error');
      await expect(threshold).toHaveText('Idle below (%) must be between 1 and 100.');
      await expect(root.locator('#idle-threshold')).toHaveAttribute('aria-invalid', 'true');
      // (A script-less post comes back with the saved numbers.)
      if (js) await expect(root.locator('#idle-threshold')).toHaveValue('0');
      await expect(root.locator('#idle-minutes')).not.toHaveAttribute('aria-invalid', 'true');
      await expect(root.locator('#idle-policy-outcome')).toHaveCount(0);
      await root.fill('#idle-threshold', '20');
      await root.check('#idle-enabled');
      await root.click('#idle-save');
      await expect(root.locator('#idle-policy-outcome')).toContainText('Idle reclaim on: below 20 %');
      await expect(threshold).toHaveCount(0);
      await ada.goto('/bookings?tz=UTC');
      await expect(ada.locator('.booking-card', { hasText: 'zz-a100' }).first()).toContainText('canceled');
      expect(errors).toEqual([]);
      await ada.context().close();
      await root.context().close();
    });

    test('a tenant quota refuses a booking with the limit, what is used and what is left', async ({ browser }) => {
      const bob = await as(browser, 'bob', js);
      const root = await as(browser, 'root', js);
      const errors = [...collectErrors(root), ...collectErrors(bob)];
      await root.goto('/admin/tenants');
      if (js) await hydrated(root);
      const units = root.getByLabel('Max units at once, b lab-h100 nvidia.com/gpu');
      await units.fill('0');
      await root.getByRole('button', { name: 'Set quota, b lab-h100 nvidia.com/gpu' }).click();
      await expect(root.getByLabel('Max units at once, b lab-h100 nvidia.com/gpu')).toHaveValue('0');
      await expect(root.locator('#notice')).toContainText('Saved: b may hold 0 units of');
      await expect(root.locator('#notice')).toContainText('on lab-h100 at once and book any GPU-hours a week.');
      // Past the limit the page says so in plain words, in the row, beside
      // the field (not at the page's top), the field marked.
      const hours = root.getByLabel('GPU-hours per week, b lab-h100 nvidia.com/gpu');
      await hours.fill('2000000');
      await root.getByRole('button', { name: 'Set quota, b lab-h100 nvidia.com/gpu' }).click();
      const said = root.locator('#tenant-b .field', { has: hours });
      await expect(said.locator('.field-error')).toHaveText(
        'GPU-hours per week, b lab-h100 nvidia.com/gpu must be at most 1 000 000 GPU-hours a week (0 or more, or empty for no limit).');
      await expect(hours).toHaveAttribute('aria-invalid', 'true');
      await expect(root.getByLabel('Max units at once, b lab-h100 nvidia.com/gpu')).not.toHaveAttribute('aria-invalid', 'true');
      if (js) await expect(hours).toHaveValue('2000000');
      await expect(root.locator('#notice', { hasText: 'GPU-hours a week' })).toHaveCount(0);
      await expect(root.locator('main')).not.toContainText('gpu_hours_per_week');
      await root.goto('/admin/tenants');
      if (js) await hydrated(root);
      await expect(root.getByLabel('GPU-hours per week, b lab-h100 nvidia.com/gpu')).toHaveValue('');
      await root.screenshot({ path: `${shots}/admin-tenants-${js ? 'js' : 'nojs'}.png`, fullPage: true });

      const h100 = await poolId(bob, 'lab-h100');
      await book(bob, js, h100, 'nvidia.com/gpu', day(d + 4), '08:00', '09:00');
      await expect(bob.locator('#outcome')).toContainText("your tenant's quota allows 0 units at once; 0 are booked at the busiest moment of this window, 0 left");
      await expect(bob.locator('#booking-panel #quota-list')).toContainText('lab-h100 GPU: 0 of 0 units now');
      await bob.goto('/bookings');
      await expect(bob.locator('#quota-list')).toContainText('lab-h100 GPU: 0 of 0 units now');

      // A limit above what the pool has is saved with a note that it never binds.
      await root.goto('/admin/tenants');
      if (js) await hydrated(root);
      await root.getByLabel('Max units at once, b lab-h100 nvidia.com/gpu').fill('99');
      await root.getByRole('button', { name: 'Set quota, b lab-h100 nvidia.com/gpu' }).click();
      await expect(root.locator('#notice')).toContainText('so this limit never binds');
      await expect(root.locator('#tenant-b .quota-unbinding')).toContainText('above the');
      // Lift it again, so other tests book freely.
      await root.goto('/admin/tenants');
      if (js) await hydrated(root);
      await root.getByLabel('Max units at once, b lab-h100 nvidia.com/gpu').fill('');
      await root.getByRole('button', { name: 'Set quota, b lab-h100 nvidia.com/gpu' }).click();
      await expect(root.getByLabel('Max units at once, b lab-h100 nvidia.com/gpu')).toHaveValue('');
      expect(errors).toEqual([]);
      await bob.context().close();
      await root.context().close();
    });

    test('a full kind is waited for: the second user is booked when the first cancels', async ({ browser }) => {
      const ada = await as(browser, 'ada', js);
      const bob = await as(browser, 'bob', js);
      const errors = [...collectErrors(ada), ...collectErrors(bob)];
      const h100 = await poolId(ada, 'lab-h100');
      const date = day(d + 5);
      await book(ada, js, h100, 'nvidia.com/gpu', date, '16:00', '17:00');
      await expect(ada.locator('#outcome')).toContainText('Booked');

      await book(bob, js, h100, 'nvidia.com/gpu', date, '16:00', '17:00');
      await expect(bob.locator('#outcome')).toContainText('not enough free capacity');
      await bob.click('#join-waitlist');
      await expect(bob.locator('#outcome')).toContainText('On the waitlist');
      await expect(bob.locator('#outcome')).toContainText('position 1');
      await bob.goto('/bookings?tz=UTC');
      const entry = bob.locator(`#waitlist .waitlist-entry[data-start^="${date}T16:00"]`);
      await expect(entry).toContainText('Waiting · position 1');
      await bob.screenshot({ path: `${shots}/waitlist-${js ? 'js' : 'nojs'}.png`, fullPage: true });

      await ada.goto('/bookings?tz=UTC');
      if (js) await hydrated(ada);
      const held = ada.locator(`.booking-card[data-start^="${date}T16:00"]`, { hasText: 'lab-h100' });
      await confirmOnCard(ada, held, 'Cancel booking', 'Yes, cancel booking');
      await expect(ada.locator('#notice')).toContainText('Canceled');

      await bob.goto('/bookings?tz=UTC');
      const booked = bob.locator(`#upcoming .booking-card[data-start^="${date}T16:00"]`, { hasText: 'lab-h100' });
      await expect(booked).toContainText('Booked from the waitlist when room freed.');
      await expect(entry).toContainText('Admitted');
      expect(errors).toEqual([]);
      await ada.context().close();
      await bob.context().close();
    });

    test('the worker page names the leader, the cluster mode and the last pass', async ({ browser }) => {
      const root = await as(browser, 'root', js);
      const errors = collectErrors(root);
      await root.goto('/admin/worker');
      if (js) await hydrated(root);
      await expect(root.locator('#worker-leader')).toContainText('leads');
      await expect(root.locator('#cluster-mode')).toHaveText('simulated (in memory)');
      const leader = root.locator('#worker-processes tbody tr').first();
      await expect(leader).toContainText('leading');
      await expect(leader.locator('td').nth(1)).toContainText(/ in \d+ ms/);
      // Each cluster with its own leader and last success; the default one answers.
      const cluster = root.locator('#worker-cluster-default');
      await expect(cluster.locator('td[data-label="Led by"]')).not.toHaveText('no worker yet');
      await expect(cluster.locator('td[data-label="Last success"]')).toContainText(/ behind\)/);
      await expect(cluster).not.toContainText('unreachable');
      // A live session's steps are all done: it reads as live, never "done".
      await expect(root.locator('#session-states')).not.toContainText(/\bdone\b/);
      await root.screenshot({ path: `${shots}/admin-worker-${js ? 'js' : 'nojs'}.png`, fullPage: true });
      expect(errors).toEqual([]);
      await root.context().close();
    });

    test('the audit log filters by action and downloads the filtered view as CSV', async ({ browser }) => {
      const root = await as(browser, 'root', js);
      const errors = collectErrors(root);
      await root.goto('/admin/audit');
      if (js) await hydrated(root);
      await root.getByLabel('Action').fill('quota.set');
      await root.getByRole('button', { name: 'Filter' }).click();
      await expect(root).toHaveURL(/action=quota\.set/);
      const rows = root.locator('#audit-list tbody tr');
      await expect(rows.first()).toContainText('quota.set');
      const actions = await root.locator('#audit-list tbody tr td:nth-child(3)').allTextContents();
      expect(actions.every((a) => a === 'quota.set')).toBe(true);
      const download = root.waitForEvent('download');
      await root.click('#audit-csv');
      const csv = readFileSync(await (await download).path(), 'utf8');
      const lines = csv.trim().split('\n');
      expect(lines[0]).toBe('at,actor,action,target,tenant,pool,detail,token,client');
      expect(lines.length).toBe(actions.length + 1);
      expect(lines.slice(1).every((l) => l.includes(',quota.set,'))).toBe(true);
      expect(errors).toEqual([]);
      await root.context().close();
    });
  });
}

/// How the approval queue prints a window's start in this context's zone,
/// UTC ("Sun 13 Dec 2026 10:00"; the column header names the zone).
function time(date: string, hhmm: string): string {
  const d = new Date(`${date}T${hhmm}:00Z`);
  const weekday = d.toLocaleDateString('en-GB', { weekday: 'short', timeZone: 'UTC' });
  const month = d.toLocaleDateString('en-GB', { month: 'short', timeZone: 'UTC' });
  return `${weekday} ${date.slice(8, 10)} ${month} ${date.slice(0, 4)} ${hhmm}`;
}
