import { expect, Page } from '@playwright/test';
import { execFileSync } from 'node:child_process';

/// Runs one statement on the portal's database (as the worker or an
/// operator would have written it); returns its rows, one per line.
export function sql(statement: string): string {
  return execFileSync('psql', [process.env.BERTH_E2E_DATABASE_URL!, '-v', 'ON_ERROR_STOP=1', '-qAt', '-c', statement],
    { encoding: 'utf8' }).trim();
}

/// Signs in through the portal's sign-in page and the provider's login form
/// (any password; the login name picks the account in oidc/provider.mjs).
export async function signIn(page: Page, login: string, hydrated = true) {
  await page.goto('/signin');
  await page.getByRole('link', { name: 'Sign in with single sign-on' }).click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  // Attached: on a narrow screen the bar is folded behind its Menu button.
  await expect(page.locator('#who-name')).toBeAttached();
  if (hydrated) await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
}

/// Signs out of the portal and confirms at the provider.
export async function signOut(page: Page) {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: /Yes, sign me out/i }).click();
  await expect(page.getByRole('link', { name: 'Sign in' }).first()).toBeVisible();
}

/// Script errors and console errors of the portal's own pages. The
/// provider's login page is not ours: it asks for web fonts this offline
/// machine cannot resolve.
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  const ours = (url: string) => url.startsWith(process.env.BERTH_E2E_BASE_URL ?? 'http://127.0.0.1:3190');
  page.on('pageerror', (err) => { if (ours(page.url())) errors.push(err.message); });
  page.on('console', (msg) => {
    if (msg.type() !== 'error' || !ours(page.url())) return;
    const source = msg.location().url;
    if (source && !ours(source)) return;
    errors.push(`${msg.text()} (${source || page.url()})`);
  });
  return errors;
}

/// A destructive action on a booking card: its button asks first (a dialog
/// with JavaScript, the booking's page without), then "Yes, …" acts.
export async function confirmOnCard(page: Page, card: ReturnType<Page['locator']>, action: string, yes: string) {
  await card.getByRole('button', { name: action, exact: true }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog).toBeVisible();
  await dialog.getByRole('button', { name: yes }).click();
}

const quarter = 15 * 60 * 1000;

/// The start of the `n`-th quarter-hour slot from the current one (0: the one running now).
export const slot = (n: number) => new Date((Math.floor(Date.now() / quarter) + n) * quarter).toISOString();

/// Books one MIG slice of lab-h100 over slots [startSlot, endSlot) through the API, as the page's user.
export async function bookLab(page: Page, startSlot: number, endSlot: number) {
  const lab = (await (await page.request.get('/api/v1/pools')).json()).find((p: { name: string }) => p.name === 'lab-h100');
  const answer = await page.request.post('/api/v1/bookings', {
    headers: { Origin: new URL(page.url()).origin },
    data: { pool_id: lab.id, kind: 'nvidia.com/mig-1g.24gb', quantity: 1, mode: 'interactive', start: slot(startSlot), end: slot(endSlot) },
  });
  expect(answer.status(), await answer.text()).toBe(201);
  return { booking: await answer.json(), pool: lab.id as string };
}
