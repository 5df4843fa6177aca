import { test, expect } from '@playwright/test';
import { signIn } from './login';

// Small things a person notices: text that cannot be read, a form field
// that checks nothing.

test("the header's Sign in reads: its text is not the colour of its background", async ({ page }) => {
  await page.goto('/');
  const link = page.locator('header nav.account a', { hasText: 'Sign in' });
  const [color, background] = await link.evaluate((el) => {
    const style = getComputedStyle(el);
    return [style.color, style.backgroundColor];
  });
  expect(color).not.toBe(background);
});

test('the tenant slug field checks its pattern in Chromium', async ({ page }) => {
  await signIn(page, 'root');
  await page.goto('/admin/tenants');
  const slug = page.locator('input[name="slug"]').first();
  await slug.fill('Not A Slug');
  expect(await slug.evaluate((el: HTMLInputElement) => el.validity.patternMismatch)).toBe(true);
  await slug.fill('team-x2');
  expect(await slug.evaluate((el: HTMLInputElement) => el.validity.valid)).toBe(true);
});
