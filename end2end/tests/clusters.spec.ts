import { test, expect, Browser } from '@playwright/test';
import { collectErrors, signIn, sql } from './login';

// Clusters in the admin console (issue 49), in a non-UTC zone at 1440 and
// 390 px: the default cluster every pool starts on, a cluster added (a
// refusal naming what is missing first), changed, and removed; a cluster
// pools run on stays; a cluster whose worker refuses says why; nobody but
// admins gets the page.

async function open(browser: Browser, login: string, width: number) {
  const context = await browser.newContext({ timezoneId: 'Europe/Berlin', viewport: { width, height: 900 } });
  const page = await context.newPage();
  const errors = collectErrors(page);
  await signIn(page, login);
  await page.goto('/admin/clusters');
  await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
  return { page, errors };
}

for (const width of [1440, 390]) {
  test(`at ${width} px an admin adds, changes and removes a cluster`, async ({ browser }) => {
    const { page, errors } = await open(browser, 'root', width);
    const row = (name: string) => page.locator(`#cluster-${name}`);
    const settings = (name: string) => row(name).locator('td[data-label="Settings"]');
    await expect(row('default')).toContainText("the worker's own credentials");
    await expect(settings('default')).toHaveText("all from the worker's flags");
    await expect(row('default')).toContainText('lab-h100');

    const name = `aws-${width}-${Date.now() % 1_000_000}`;
    const form = page.locator('#cluster-form-new');
    await form.getByLabel('Name (a DNS label').fill(name);
    await form.getByRole('button', { name: 'Add cluster' }).click();
    // Said beside the field, not at the page's top.
    await expect(form.locator('.field-error')).toHaveText(
      'Kubeconfig Secret (in berth-clusters, key kubeconfig) is required for kubeconfig access.');
    await expect(page.locator('#notice')).toHaveCount(0);
    await expect(row(name)).toHaveCount(0);

    await form.getByRole('textbox', { name: /^Kubeconfig Secret/ }).fill(`${name}-kubeconfig`);
    await form.getByLabel('Kueue quota per session').selectOption('on');
    await form.getByRole('button', { name: 'Add cluster' }).click();
    await expect(page.locator('#notice')).toHaveText(`Saved cluster ${name}.`);
    await expect(row(name)).toContainText(`kubeconfig in Secret ${name}-kubeconfig`);
    await expect(settings(name)).toHaveText('Kueue on');
    await expect(row(name).locator('td[data-label="Pools"]')).toHaveText('none');

    // A worker that will not publish there says why, on this page (issue 60).
    const why = `workspaces would be published under gpu.${name}.example.net, but this cluster's policies guard berth.example.org`;
    sql(`INSERT INTO cluster_status (cluster_id, worker, error) SELECT id, 'hub-1', '${why.replace(/'/g, "''")}' FROM cluster WHERE name = '${name}'`);
    await page.reload();
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    await expect(row(name).locator('.cluster-problem')).toHaveText(`Its worker says: ${why}`);
    await expect(row('default').locator('.cluster-problem')).toHaveCount(0);

    // Its form keeps what was saved, and a change replaces it.
    await row(name).getByText('Edit').click();
    const edit = page.locator(`#cluster-form-${name}`);
    await expect(edit.getByLabel('Kueue quota per session')).toHaveValue('on');
    await edit.getByLabel('Workspaces exposed by').selectOption('route');
    await edit.getByLabel('Kueue quota per session').selectOption('');
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect(page.locator('#notice')).toHaveText(`Saved cluster ${name}.`);
    await expect(settings(name)).toHaveText('expose route');

    // The cluster the pools run on stays; the new, empty one goes.
    await row('default').getByRole('button', { name: 'Remove default' }).click();
    await expect(page.locator('#notice')).toContainText('default ');
    await expect(page.locator('#notice')).toHaveClass(/refused/);
    await expect(row('default')).toBeVisible();
    await row(name).getByRole('button', { name: `Remove ${name}` }).click();
    await expect(page.locator('#notice')).toHaveText('Cluster removed.');
    await expect(row(name)).toHaveCount(0);

    const audit = await page.request.get('/api/v1/audit?action=cluster');
    const targets = (await audit.json()).entries.map((e: { action: string, target: string }) => `${e.action} ${e.target}`);
    for (const action of ['cluster.create', 'cluster.update', 'cluster.delete']) expect(targets).toContain(`${action} ${name}`);
    expect(errors).toEqual([]);
  });
}

test('users and managers are refused the clusters page and its data', async ({ browser }) => {
  for (const login of ['ada', 'mia']) {
    const { page, errors } = await open(browser, login, 1440);
    await expect(page.locator('#forbidden')).toContainText('This page is for admins.');
    await expect(page.locator('#cluster-list')).toHaveCount(0);
    expect((await page.request.get('/api/v1/clusters')).status()).toBe(403);
    // The page itself answers 403, which the console reports; nothing else.
    expect(errors.filter((e) => !e.includes('status of 403'))).toEqual([]);
  }
});
