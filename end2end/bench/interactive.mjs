// Loads the calendar ten times in Debian's Chromium and prints how long each
// took from navigation start until the page was hydrated (interactive).
import { chromium } from 'playwright-core';

const base = process.env.BERTH_URL;
const pool = process.env.BERTH_POOL;
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, timezoneId: 'UTC' });
const page = await context.newPage();
await page.goto(`${base}/signin`);
await page.selectOption('#dev-user', 'ada@berth.local');
await page.click('button[type=submit]');
const times = [];
for (let i = 0; i < 10; i++) {
  await page.goto(`${base}/calendar?pool=${pool}&tz=UTC`, { waitUntil: 'commit' });
  await page.waitForSelector('main[data-hydrated="true"]', { state: 'attached' });
  const ms = await page.evaluate(() => performance.now());
  const cells = await page.locator('td.slot').count();
  times.push(ms);
  if (i === 0) console.log(`cells on the page: ${cells}`);
}
const first = times[0];
times.sort((a, b) => a - b);
const fmt = (v) => `${v.toFixed(0)} ms`;
console.log(`interactive after: first load ${fmt(first)}; of 10: min ${fmt(times[0])}, median ${fmt(times[5])}, max ${fmt(times[9])}`);
await browser.close();
