import { test, expect, Browser, Page } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { collectErrors, signIn } from './login';

// Tokenomics for managers: results follow the inputs as they are typed
// (hydrated) and come back from a script-less post; users cannot reach it.

async function as(browser: Browser, login: string, js: boolean): Promise<Page> {
  const context = await browser.newContext({ javaScriptEnabled: js });
  const page = await context.newPage();
  await signIn(page, login, js);
  return page;
}

async function fillWorkedCheck(page: Page) {
  const inputs: [string, string][] = [
    ['capex_per_gpu', '30000'], ['amortization_years', '4'], ['power_kw', '0.7'], ['pue', '1.2'],
    ['electricity_per_kwh', '0.083'], ['maintenance_pct_per_year', '10'], ['rent_per_gpu_hour', ''],
    ['tokens_per_second', '8088'], ['utilization_pct', '100'], ['price_per_million_tokens', '0.10'],
  ];
  for (const [name, value] of inputs) await page.locator(`#tk-${name}`).fill(value);
}

test('a manager edits the cost model and the results follow as they type', async ({ browser }) => {
  const page = await as(browser, 'mia', true);
  const errors = collectErrors(page);
  await page.getByRole('link', { name: 'Tokenomics' }).click();
  await expect(page.getByRole('heading', { name: 'Tokenomics' })).toBeVisible();
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
  await fillWorkedCheck(page);
  await expect(page.locator('#tk-cost-hour')).toHaveText('1.27');
  await expect(page.locator('#tk-cost-mtok')).toHaveText('0.044');
  await expect(page.locator('#tk-break-even')).toHaveText('43.6 %');
  // Half the utilisation doubles the cost per token, before anything is saved.
  await page.locator('#tk-utilization_pct').fill('50');
  await expect(page.locator('#tk-cost-mtok')).toHaveText('0.087');
  // A figure it cannot use is said beside its field as it is typed; the
  // results say where they went.
  await page.locator('#tk-pue').fill('oops');
  await expect(page.locator('#tk-pue-error')).toHaveText('PUE must be a number.');
  await expect(page.locator('#tk-pue')).toHaveAttribute('aria-describedby', 'tk-pue-error');
  await expect(page.locator('#tk-waiting')).toBeVisible();
  await expect(page.locator('#tk-form [aria-invalid="true"]')).toHaveCount(1);
  await page.locator('#tk-pue').fill('1.2');
  await expect(page.locator('#tk-pue-error')).toHaveCount(0);
  await page.locator('#tk-utilization_pct').fill('150');
  await expect(page.locator('#tk-utilization_pct-error')).toHaveText('Utilisation % must be between 0 and 100 %.');
  await page.locator('#tk-utilization_pct').fill('50');
  await page.locator('#tk-tokens_per_day').fill('1000000000');
  await expect(page.locator('#tk-gpus')).toHaveText('3');
  await page.locator('#tk-save').click();
  await expect(page.locator('#notice')).toContainText('Saved: 1.27 per GPU-hour');
  await page.reload();
  await expect(page.locator('#tk-utilization_pct')).toHaveValue('50');
  expect(errors).toEqual([]);
});

test('without JavaScript the form posts and the page shows the saved figures', async ({ browser }) => {
  const page = await as(browser, 'mia', false);
  await page.goto('/reports/tokenomics');
  // A refused figure comes back beside its field, not at the page's top.
  await page.locator('#tk-power_kw').fill('a lot');
  await page.locator('#tk-save').click();
  await expect(page.locator('#tk-power_kw-error')).toHaveText('Power per GPU (kW) must be a number.');
  await expect(page.locator('#tk-power_kw')).toHaveAttribute('aria-invalid', 'true');
  await expect(page.locator('#notice')).toHaveCount(0);
  await fillWorkedCheck(page);
  await page.locator('#tk-save').click();
  await expect(page.locator('#notice')).toContainText('Saved: 1.27 per GPU-hour');
  await expect(page.locator('#tk-cost-mtok')).toHaveText('0.044');
  await expect(page.locator('#tk-break-even')).toHaveText('43.6 %');
});

test('a user has no Tokenomics link and is refused the page', async ({ browser }) => {
  const page = await as(browser, 'ada', true);
  await expect(page.getByRole('link', { name: 'Tokenomics' })).toHaveCount(0);
  const response = await page.goto('/reports/tokenomics');
  expect(response?.status()).toBe(403);
});

// Utilisation reports: a manager changes the period and downloads the
// table as CSV, with and without JavaScript; users are refused.

test('a manager reads the report, changes the period and downloads the CSV', async ({ browser }) => {
  const page = await as(browser, 'mia', true);
  const errors = collectErrors(page);
  await page.getByRole('link', { name: 'Reports', exact: true }).click();
  await expect(page.getByRole('heading', { name: 'Reports' })).toBeVisible();
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
  await expect(page.locator('#report-table tbody tr').first()).toBeVisible();
  await expect(page.locator('#report-table tfoot')).toContainText('All');
  // The table names its units: whole-GPU equivalents, and the showback's currency.
  await expect(page.locator('#report-table caption')).toContainText('GPU-hours (whole-GPU equivalent)');
  await expect(page.locator('#report-table thead')).toContainText('Showback (USD)');
  // Three tiers: reserved, held by a pod, really busy; idle booked is booked less active.
  for (const tier of ['Booked', 'Occupied', 'Active', 'Active % of booked', 'Idle booked']) {
    await expect(page.locator('#report-table thead')).toContainText(tier);
  }
  await expect(page.locator('#report-table caption')).toContainText('Idle booked: booked but not active');
  await expect(page.locator('#trend-chart polyline')).toHaveCount(3);
  // The week's trend names its days under the axis, Monday first.
  const dates = await page.locator('#trend-chart text.date').allTextContents();
  expect(dates.length).toBeGreaterThanOrEqual(2);
  expect(dates[0]).toMatch(/^Mon \d\d [A-Z][a-z]{2}$/);
  expect(dates[dates.length - 1]).toMatch(/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d\d [A-Z][a-z]{2}$/);
  await expect(page.locator('#heat-map rect')).toHaveCount(168);
  const week = await page.locator('#report-span').textContent();
  await page.locator('#report-period-kind').selectOption('month');
  await page.locator('#report-group').selectOption('tenant');
  await page.locator('#report-show').click();
  await expect(page).toHaveURL(/period=month/);
  await expect(page.locator('#report-span')).not.toHaveText(week ?? '');
  await expect(page.locator('#report-table thead')).toContainText('Tenant');
  await page.locator('#report-previous').click();
  await expect(page).toHaveURL(/period=month&date=/);
  const downloading = page.waitForEvent('download');
  await page.locator('#report-csv').click();
  const download = await downloading;
  const body = await (await download.createReadStream()).toArray();
  const csv = Buffer.concat(body).toString('utf8');
  expect(csv.split('\n')[0]).toBe(
    'id,name,capacity_gpu_hours,booked_gpu_hours,booking_utilization_pct,occupied_gpu_hours,active_gpu_hours,' +
    'active_utilization_pct,busy_gpu_hours,busy_utilization_pct,idle_booked_gpu_hours,device_level_only,' +
    'lent_gpu_hours,no_shows,returned_gpu_hours,refused_gpu_hours,waitlisted_gpu_hours,showback_cost,currency,simulated');
  expect(csv).toContain(',All,');
  expect(errors).toEqual([]);
});

test('without JavaScript the period form still works', async ({ browser }) => {
  const page = await as(browser, 'mia', false);
  await page.goto('/reports');
  await page.locator('#report-period-kind').selectOption('day');
  await page.locator('#report-show').click();
  await expect(page).toHaveURL(/period=day/);
  await expect(page.locator('#report-table tfoot')).toContainText('All');
  await expect(page.locator('#trend-chart')).toBeVisible();
  await expect(page.locator('#report-table tbody')).toContainText('lab-h100');
  // One cluster's report: its pools and homes alone (lab-east has none
  // yet), and the period links keep to it.
  await page.locator('#report-cluster').selectOption('lab-east');
  await page.locator('#report-show').click();
  await expect(page).toHaveURL(/cluster=lab-east/);
  await expect(page.locator('#report-cluster')).toHaveValue('lab-east');
  await expect(page.locator('#report-table tbody')).not.toContainText('lab-h100');
  await expect(page.locator('#storage-none')).toBeVisible();
  await expect(page.locator('#report-next')).toHaveAttribute('href', /cluster=lab-east/);
  await expect(page.locator('#report-csv')).toHaveAttribute('href', /cluster=lab-east/);
});

test('a user has no Reports link and is refused the report', async ({ browser }) => {
  const page = await as(browser, 'ada', true);
  await expect(page.getByRole('link', { name: 'Reports', exact: true })).toHaveCount(0);
  const response = await page.goto('/reports');
  expect(response?.status()).toBe(403);
  // A page that says so in words, not the transport's "error running server function: …".
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Not for your role');
  await expect(page.locator('#forbidden')).toContainText('This page is for managers and admins.');
});

// Tokenomics' presets name the hardware they assume and follow the pool's
// GPU: on a 48 GB L40S the 8B model is scaled by memory bandwidth and the
// 70B FP8 one is said not to fit, with and without JavaScript.
for (const js of [true, false]) {
  test(`the presets follow the pool's GPU and say when a model does not fit it ${js ? 'hydrated' : 'without JavaScript'}`, async ({ browser }) => {
    const root = await as(browser, 'root', true);
    const origin = { Origin: new URL(root.url()).origin };
    const made = await root.request.post('/api/v1/pools', { headers: origin, data: {
      name: `l40s-${js ? 'js' : 'nojs'}-${Date.now()}`, gpu_model: 'NVIDIA L40S', kinds: [{ kind: 'nvidia.com/gpu', capacity: 2 }] } });
    expect(made.status(), await made.text()).toBe(201);
    const pool = await made.json();
    const page = await as(browser, 'mia', js);
    const errors = collectErrors(page);
    await page.goto(`/reports/tokenomics?pool=${pool.id}`);
    if (js) await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    await expect(page.locator('#tk-hardware')).toContainText("Presets assume this pool's GPU, L40S 48 GB (NVIDIA L40S): 48 GB at 0.864 TB/s.");
    // The tests' database holds the demo history (global-setup.ts): the page says its figures are made up.
    await expect(page.locator('#tk-demo')).toContainText('Demo data: the bookings from Thu 02 Oct 2025 to Fri 31 Oct 2025');
    await expect(page.locator('#tk-hardware')).toContainText('does not fit one L40S 48 GB: its weights alone are 70 GB');
    await expect(page.locator('#tk-preset option[value="llama-3.1-8b"]')).toHaveText('Llama 3.1 8B Instruct BF16 (8B class) — 2068 tokens/s');
    const large = page.locator('#tk-preset option[value="llama-3.3-70b"]');
    await expect(large).toHaveText("Llama 3.3 70B Instruct FP8 (70B class) — does not fit this pool's GPU");
    await expect(large).toBeDisabled();
    // Hydrated, the field holds the preset's figure on this GPU (without
    // JavaScript it stays empty, and an empty field takes the chosen preset's).
    if (js) await expect(page.locator('#tk-tokens_per_second')).toHaveValue('2068');
    expect(errors).toEqual([]);
    await page.context().close();
    await root.context().close();
  });
}

// At 1440 px the whole table is on screen, Showback included, by pool and by
// user; a year's trend writes its dates apart; the All row adds up its members.
test('at 1440 px the report fits, its dates do not overlap and All adds up its members', async ({ browser }) => {
  const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
  const errors = collectErrors(page);
  await signIn(page, 'mia');
  const year = new Date().getUTCFullYear();
  for (const group of ['pool', 'user']) {
    await page.goto(`/reports?group=${group}&period=custom&date=${year}-01-01&until=${year}-12-31`);
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    const scroll = await page.locator('.table-scroll:has(#report-table)').evaluate((el) => el.scrollWidth - el.clientWidth);
    expect(scroll, `${group}: the table scrolls sideways`).toBeLessThanOrEqual(0);
    const showback = await page.locator('#report-table thead th').last().boundingBox();
    expect(showback!.x + showback!.width, group).toBeLessThanOrEqual(1440);
    // Every figure column of All is the sum of the rows above, as shown (read
    // in one go: the page stays live and may redraw between two reads).
    const table = await page.locator('#report-table').evaluate((t: HTMLTableElement) => {
      const figures = (row: HTMLTableRowElement) => [...row.cells].slice(1).map((c) => parseFloat(c.textContent ?? '') || 0);
      return { rows: [...t.tBodies[0].rows].map(figures), total: figures(t.tFoot!.rows[0]) };
    });
    for (const column of [1, 5, 11]) { // booked, idle booked, showback
      const sum = table.rows.reduce((s, row) => s + row[column], 0);
      expect(Math.abs(sum - table.total[column]), `${group} column ${column}`).toBeLessThan(0.011);
    }
  }
  const boxes = await page.locator('#trend-chart text.date').evaluateAll((els) => els.map((e) => {
    const b = e.getBoundingClientRect();
    return [b.left, b.right];
  }));
  expect(boxes.length).toBeGreaterThanOrEqual(4);
  for (let i = 1; i < boxes.length; i++) expect(boxes[i][0], `date ${i}`).toBeGreaterThan(boxes[i - 1][1]);
  expect(errors).toEqual([]);
  await page.context().close();
});

// Issue 61: charts a manager trusts. Round ticks on gridlines, each
// bucket's exact figures on hover and in a table, no chart text under
// 11 px at 1440 or 390 px, axe clean.
test('the trend has round ticks, gridlines, tooltips and a table; chart text is 11 px or more at both widths', async ({ browser }) => {
  for (const width of [1440, 390]) {
    const context = await browser.newContext({ timezoneId: 'Europe/Berlin', viewport: { width, height: 900 } });
    const page = await context.newPage();
    const errors = collectErrors(page);
    await signIn(page, 'mia');
    await page.goto('/reports');
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    const chart = page.locator('#trend-chart');
    const values = (await chart.locator('text.value').allTextContents()).map(Number);
    expect(values.length).toBeGreaterThanOrEqual(3);
    expect(values[0]).toBe(0);
    const step = values[1] - values[0];
    for (let i = 1; i < values.length; i++) expect(values[i] - values[i - 1]).toBeCloseTo(step, 6);
    // 1, 2 or 5 times a power of ten apart.
    const mantissa = step / 10 ** Math.floor(Math.log10(step) + 1e-9);
    expect([1, 2, 5]).toContain(Math.round(mantissa * 1000) / 1000);
    await expect(chart.locator('line.grid')).not.toHaveCount(0);
    await expect(chart.locator('text.axis-name')).toHaveText(/^GPU-hours per (hour|day|week)$/);
    // A band per bucket names its figures; the same figures are a table.
    const bands = chart.locator('rect.hover');
    const buckets = await bands.count();
    expect(buckets).toBeGreaterThan(1);
    await expect(bands.first().locator('title')).toHaveText(/^.+: capacity [\d.]+, booked [\d.]+, busy [\d.]+ GPU-hours$/);
    await expect(page.locator('#trend-table tbody tr')).toHaveCount(buckets);
    // Every chart's text, as drawn: its font size times the SVG's scale.
    const sizes = await page.locator('svg[role="img"] text').evaluateAll((texts) => texts.map((t) => {
      const svg = (t as SVGTextElement).ownerSVGElement!;
      const scale = svg.getScreenCTM()!.a;
      return parseFloat(getComputedStyle(t).fontSize) * scale;
    }));
    expect(sizes.length).toBeGreaterThan(10);
    expect(Math.min(...sizes), `at ${width} px`).toBeGreaterThanOrEqual(11);
    const axe = await new AxeBuilder({ page }).include('figure.chart').analyze();
    expect(axe.violations).toEqual([]);
    await page.screenshot({ path: `test-results/screenshots/report-charts-${width}.png`, fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  }
});
