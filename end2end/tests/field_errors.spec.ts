import { test, expect, Browser, Page } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { collectErrors, signIn, sql } from './login';

// Issue 61, people's words: a refused field is a sentence by its label,
// beside the input it is about (marked invalid and named by it), on the
// pool form (with and without JavaScript), the series form and the
// report's period; no field name from the code ("horizon_days:", "until:")
// reaches the page. Berlin time, 1440 and 390 px.

async function as(browser: Browser, login: string, width: number, js = true): Promise<Page> {
  const context = await browser.newContext({
    timezoneId: 'Europe/Berlin', viewport: { width, height: 900 }, javaScriptEnabled: js,
  });
  const page = await context.newPage();
  await signIn(page, login, js);
  return page;
}

const isoDay = (daysAhead: number) => new Date(Date.now() + daysAhead * 86_400_000).toISOString().slice(0, 10);

/// The field's sentence is under its input, which is invalid and described by it.
async function refusedBeside(page: Page, input: string, error: string, sentence: string) {
  const said = page.locator(error);
  await expect(said).toHaveText(sentence);
  await expect(page.locator(input)).toHaveAttribute('aria-invalid', 'true');
  await expect(page.locator(input)).toHaveAttribute('aria-describedby', error.slice(1));
  const [field, words] = [(await page.locator(input).boundingBox())!, (await said.boundingBox())!];
  // Right under the input, not somewhere else on the page.
  expect(words.y).toBeGreaterThanOrEqual(field.y + field.height - 1);
  expect(words.y - (field.y + field.height)).toBeLessThan(40);
  await expect(page.locator('main')).not.toContainText(/\b[a-z]+_[a-z_]+:/);
}

/// The new-pool form, filled with a name and one kind of one GPU: what
/// a pool needs before the field a test spoils.
async function newPool(page: Page, name: string) {
  const form = page.locator('#new-pool');
  await form.getByLabel('Name', { exact: true }).fill(name);
  await form.getByLabel('Kind, kind row 1').fill('nvidia.com/gpu');
  await form.getByLabel('Physical units, kind row 1').fill('1');
  return form;
}

for (const width of [1440, 390]) {
  for (const js of [true, false]) {
    test(`the pool form says which field is wrong beside it, ${js ? 'hydrated' : 'without JavaScript'}, at ${width} px`, async ({ browser }) => {
      const page = await as(browser, 'root', width, js);
      const errors = collectErrors(page);
      await page.goto('/admin/pools');
      const form = await newPool(page, `zz-words-${width}-${js}`);
      await form.getByLabel('Horizon (days ahead)').fill('0');
      await form.getByRole('button', { name: 'Create pool' }).click();
      await refusedBeside(page, 'input[name="form[horizon_days]"]', '#pool-horizon_days-error',
        'Horizon (days ahead) must be between 1 and 366 days.');
      // The page's notice says it too, in words.
      await expect(page.locator('#notice')).toHaveText('Horizon days must be between 1 and 366 days.');
      // Only that field is marked.
      await expect(form.locator('[aria-invalid="true"]')).toHaveCount(1);
      // Axe runs in the page: only with JavaScript.
      if (js) expect((await new AxeBuilder({ page }).include('#new-pool').analyze()).violations).toEqual([]);
      expect(errors).toEqual([]);
      await page.context().close();
    });
  }

  test(`a series' last day before its first is refused beside "Last day" at ${width} px`, async ({ browser }) => {
    const page = await as(browser, 'ada', width);
    const errors = collectErrors(page);
    await page.goto('/series');
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    await page.getByLabel('Pool and kind').selectOption({ label: 'lab-h100 · nvidia.com/mig-1g.24gb' });
    await page.getByLabel('First day').fill(isoDay(12));
    await page.getByLabel('From', { exact: true }).fill('09:00');
    await page.getByLabel('To', { exact: true }).fill('10:00');
    await page.getByLabel('Last day').fill(isoDay(10));
    await page.getByRole('button', { name: 'Preview occurrences' }).click();
    await refusedBeside(page, '#series-until', '#series-until-error', "Last day must be on or after the first window's day.");
    await expect(page.locator('#series-outcome')).toHaveText("Until must be on or after the first window's day.");
    // Corrected, the mark goes.
    await page.getByLabel(/^Last day/).fill(isoDay(13));
    await page.getByRole('button', { name: 'Preview occurrences' }).click();
    await expect(page.locator('#series-plan')).toBeVisible();
    await expect(page.locator('#series-until')).not.toHaveAttribute('aria-invalid', 'true');
    await expect(page.locator('#series-until-error')).toHaveCount(0);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test(`a custom report ending before it starts keeps the dates asked and marks "Until" at ${width} px`, async ({ browser }) => {
    const page = await as(browser, 'mia', width);
    const errors = collectErrors(page);
    await page.goto('/reports?period=custom&date=2026-11-10&until=2026-11-01');
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    await refusedBeside(page, '#report-until', '#report-until-error', 'Until (custom) must not be before the first day.');
    await expect(page.locator('#report-date')).toHaveValue('2026-11-10');
    await expect(page.locator('#report-period-kind')).toHaveValue('custom');
    expect((await new AxeBuilder({ page }).include('#report-period').analyze()).violations).toEqual([]);
    expect(errors).toEqual([]);
    await page.context().close();
  });
}

// The admin's and the settings' forms, one field component: a refused
// value is said inside the field it concerns (under its input, which is
// marked invalid and described by the sentence), not at the page's top.
// Each is sent a value the browser lets through and the server refuses.

async function visit(page: Page, path: string) {
  await page.goto(path);
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
}

/// The input `name` inside `form` is refused with `sentence`, said in its
/// own field right under it, and the page passes axe with it shown.
async function saidBeside(page: Page, form: string, name: string, sentence: string) {
  const field = page.locator(`${form} .field:has([name="${name}"])`);
  const error = field.locator('.field-error');
  await expect(error).toHaveText(sentence);
  const input = field.locator(`[name="${name}"]`);
  await expect(input).toHaveAttribute('aria-invalid', 'true');
  await expect(input).toHaveAttribute('aria-describedby', (await error.getAttribute('id'))!);
  await expect(field).toHaveClass(/invalid/);
  const [under, over] = [(await error.boundingBox())!, (await input.boundingBox())!];
  expect(under.y).toBeGreaterThanOrEqual(over.y + over.height - 1);
  expect(under.y - (over.y + over.height)).toBeLessThan(60);
  await expect(page.locator('#notice')).toHaveCount(0);
  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.map((v) => v.id)).toEqual([]);
}

for (const width of [1440, 390]) {
  test.describe(`at ${width} px`, () => {
    test('tenants: a blank name, new or renamed, is said beside it', async ({ browser }) => {
      const page = await as(browser, 'root', width);
      const errors = collectErrors(page);
      await visit(page, '/admin/tenants');
      const create = page.locator('#new-tenant');
      await create.locator('[name="slug"]').fill(`words-${width}`);
      await create.locator('[name="name"]').fill('   ');
      await create.getByRole('button', { name: 'Create tenant' }).click();
      await saidBeside(page, '#new-tenant', 'name', 'Name must be 1 to 100 characters.');
      // The sentence goes once the name is good, and the tenant is made.
      await create.locator('[name="name"]').fill(`Words ${width}`);
      await create.getByRole('button', { name: 'Create tenant' }).click();
      await expect(page.locator('#new-tenant-notice')).toHaveText(`Created tenant Words ${width} (words-${width}).`);
      await expect(create.locator('.field-error')).toHaveCount(0);
      // A rename is said in that tenant's own form, not in the others'.
      const section = page.locator(`#tenant-words-${width}`);
      await section.locator('[name="name"]').fill(' ');
      await section.getByRole('button', { name: 'Rename' }).click();
      await saidBeside(page, `#tenant-words-${width}`, 'name', `New name of words-${width} must be 1 to 100 characters.`);
      await expect(page.locator('.field-error')).toHaveCount(1);
      // What was typed stays beside its sentence (the list is not drawn anew).
      await expect(section.locator('[name="name"]')).toHaveValue(' ');
      expect(errors).toEqual([]);
      await page.context().close();
    });

    test('tokens, webhooks and the homes price: the refused value is said beside its field', async ({ browser }) => {
      const page = await as(browser, 'root', width);
      const errors = collectErrors(page);
      await visit(page, '/tokens');
      await page.locator('[name="name"]').fill('  ');
      await page.getByRole('button', { name: 'Create token' }).click();
      await saidBeside(page, 'form', 'name', 'Name must be 1 to 60 characters.');
      await expect(page.locator('#new-token')).toHaveCount(0);

      await visit(page, '/settings');
      await page.locator('#webhook-url').fill('ftp://hooks.example.org/berth');
      await page.getByRole('button', { name: 'Add', exact: true }).click();
      await saidBeside(page, 'form', 'url', 'URL must be an http:// or https:// address.');

      await visit(page, '/admin/homes');
      await page.locator('#home-price [name="per_gib_month"]').fill('cheap');
      await page.getByRole('button', { name: 'Save price' }).click();
      await saidBeside(page, '#home-price', 'per_gib_month', 'Per GiB-month must be a number.');
      await expect(page.locator('#home-price [name="per_gib_month"]')).toHaveValue('cheap');
      // A tenant's sizes: said in that tenant's row, under the size refused.
      const sizes = 'table.homes-per-tenant tbody tr:first-child';
      const slug = (await page.locator(`${sizes} code`).textContent())!;
      await page.locator(`${sizes} [name="cache_gib"]`).fill('a lot');
      await page.locator(sizes).getByRole('button', { name: /^Save homes, / }).click();
      await saidBeside(page, sizes, 'cache_gib', `Model cache size in GiB, ${slug} must be a whole number.`);
      await expect(page.locator(`${sizes} [name="cache_gib"]`)).toHaveValue('a lot');
      await expect(page.locator('table.homes-per-tenant .field-error')).toHaveCount(1);
      expect(errors).toEqual([]);
      await page.context().close();
    });

    test('without JavaScript, a refused token name or webhook comes back beside its field', async ({ browser }) => {
      const page = await as(browser, 'root', width, false);
      await page.goto('/tokens');
      await page.locator('[name="name"]').fill(' ');
      await page.getByRole('button', { name: 'Create token' }).click();
      await expect(page.locator('.field:has([name="name"]) .field-error')).toHaveText('Name must be 1 to 60 characters.');
      await expect(page.locator('[name="name"]')).toHaveAttribute('aria-invalid', 'true');
      await expect(page.locator('#new-token')).toHaveCount(0);
      await page.goto('/settings');
      await page.locator('#webhook-url').fill('ftp://hooks.example.org/berth');
      await page.getByRole('button', { name: 'Add', exact: true }).click();
      await expect(page.locator('.field:has(#webhook-url) .field-error'))
        .toHaveText('URL must be an http:// or https:// address.');
      await page.context().close();
    });

    test('users: a refused tenant or reason is said in that user\'s row only', async ({ browser }) => {
      const page = await as(browser, 'root', width);
      const errors = collectErrors(page);
      await visit(page, '/admin/users');
      const mine = '#user-list tr:has-text("root@example.test")';
      const row = page.locator(mine);
      // A mistyped slug is refused, not made into a tenant nobody asked for.
      const typo = `no-such-team-${width}`;
      await row.locator('[name="tenant"]').fill(typo);
      await row.getByRole('button', { name: 'Add', exact: true }).click();
      await saidBeside(page, mine, 'tenant',
        'Tenant for root@example.test names no tenant: make it on the Tenants page first.');
      await expect(row.locator('[name="tenant"]')).toHaveValue(typo);
      expect(sql(`SELECT count(*) FROM tenant WHERE slug = '${typo}'`)).toBe('0');
      await row.locator('[name="reason"]').fill(' ');
      await row.getByRole('button', { name: 'Disable root@example.test' }).click();
      await saidBeside(page, mine, 'reason', 'Reason to disable root@example.test must say why, in 1 to 500 characters.');
      await expect(page.locator('#user-list .field-error')).toHaveCount(2);
      expect(errors).toEqual([]);
      await page.context().close();
    });

    test('clusters and maintenance: the refused value is said beside its field', async ({ browser }) => {
      const page = await as(browser, 'root', width);
      const errors = collectErrors(page);
      await visit(page, '/admin/clusters');
      const cluster = page.locator('#cluster-form-new');
      await cluster.locator('[name="form[name]"]').fill('Not A Label');
      await cluster.getByRole('button', { name: 'Add cluster' }).click();
      await expect(cluster.locator('.field-error')).toContainText(/^Name \(a DNS label; it never changes\) /);
      await saidBeside(page, '#cluster-form-new', 'form[name]',
        (await cluster.locator('.field-error').textContent())!);

      const pool = sql("SELECT id FROM pool ORDER BY name LIMIT 1");
      await visit(page, `/admin/pools/${pool}`);
      const zone = (await page.locator('#new-blackout [name="start"]').evaluate(
        (input) => input.closest('.field')!.querySelector('.field-label')!.textContent!)).match(/\((.+)\)/)![1];
      await page.fill('#blackout-start', '2030-03-05T12:00');
      await page.fill('#blackout-end', '2030-03-05T09:00');
      await page.fill('#blackout-reason', 'words');
      await page.click('#blackout-submit');
      await expect(page.locator('#new-blackout .field-error')).toHaveCount(1);
      const said = (await page.locator('#new-blackout .field-error').textContent())!;
      expect(said).toMatch(new RegExp(`^To \\(${zone.replace('/', '\\/')}\\) must be after`));
      await saidBeside(page, '#new-blackout', 'end', said);
      await expect(page.locator('#blackout-reason')).toHaveValue('words');
      expect(errors).toEqual([]);
      await page.context().close();
    });

    test('the pool form\'s lists and the audit filter: the refused entry is said beside its field', async ({ browser }) => {
      const page = await as(browser, 'root', width);
      const errors = collectErrors(page);
      await visit(page, '/admin/pools');
      const form = await newPool(page, `zz-lists-${width}`);
      // A line of a list is named by what it says, beside the list's area.
      await form.getByLabel('Node selector').fill('gpu-nodes');
      await form.getByRole('button', { name: 'Create pool' }).click();
      await refusedBeside(page, 'textarea[name="form[node_selector]"]', '#pool-node_selector-error',
        'Node selector: gpu-nodes must be written key=value.');
      await form.getByLabel('Node selector').fill(`berth.test/lists=${width}`);
      await form.getByLabel('Workspace images').fill('jupyter/base\nnot an image');
      await form.getByRole('button', { name: 'Create pool' }).click();
      await refusedBeside(page, 'textarea[name="form[images]"]', '#pool-images-error',
        'Workspace images: image 2 must be an image reference without spaces.');
      await expect(form.locator('[aria-invalid="true"]')).toHaveCount(1);
      await expect(form.getByLabel('Workspace images')).toHaveValue('jupyter/base\nnot an image');

      // The log's days: one the page cannot read, and a last before the first.
      await visit(page, '/admin/audit?from=2026-11-20&to=2026-11-10');
      await saidBeside(page, '#audit-filter', 'to', 'To must not be before From.');
      await expect(page.locator('#audit-list')).toHaveCount(0);
      await visit(page, '/admin/audit?from=yesterday');
      await saidBeside(page, '#audit-filter', 'from', 'From must be a date like 2026-11-23.');
      await visit(page, '/admin/audit?from=2026-11-10&to=2026-11-20');
      await expect(page.locator('#audit-filter .field-error')).toHaveCount(0);
      await expect(page.locator('#audit-list')).toBeVisible();
      expect(errors).toEqual([]);
      await page.context().close();
    });
  });
}
