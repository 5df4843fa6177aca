// The calendar as a browser receives it, in Debian's Chromium: bytes on the
// wire for a cold load (empty cache) and a warm one (the same browser
// again), and the time from navigation start until the page is hydrated
// (interactive), on loopback and at 10 Mbit/s with 40 ms round trips
// (Chromium's network emulation). Every load asks for `br`, as browsers do.
import { chromium } from 'playwright-core';

const base = process.env.BERTH_URL;
const pool = process.env.BERTH_POOL;
const url = `${base}/calendar?pool=${pool}&tz=UTC${process.env.BERTH_DATE ? `&date=${process.env.BERTH_DATE}` : ''}`;
const LOADS = 10;
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

// A fresh browser profile signed in as ada, its cache emptied again after
// signing in (the sign-in pages load the same assets), in a new tab.
async function signedIn() {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, timezoneId: 'UTC' });
  const signin = await context.newPage();
  await signin.goto(`${base}/signin`);
  await signin.selectOption('#dev-user', 'ada@berth.local');
  await signin.click('button[type=submit]');
  await signin.waitForURL((u) => !u.pathname.startsWith('/signin'));
  const page = await context.newPage();
  await signin.close();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.clearBrowserCache');
  return { context, page, cdp };
}

// Loads the calendar once; returns ms until hydrated and the bytes received
// (headers + body as sent, i.e. compressed) by kind of resource.
async function load({ page, cdp }) {
  const kinds = new Map();
  const bytes = { html: 0, wasm: 0, js: 0, css: 0, other: 0, data: 0 };
  const onResponse = (e) => {
    const path = new URL(e.response.url).pathname;
    const kind = e.type === 'Document' ? 'html'
      : path.endsWith('.wasm') ? 'wasm' : path.endsWith('.js') ? 'js' : path.endsWith('.css') ? 'css'
        : path.startsWith('/rpc/') ? 'data' : 'other';
    kinds.set(e.requestId, kind);
  };
  const onFinished = (e) => {
    const kind = kinds.get(e.requestId);
    if (kind) bytes[kind] += e.encodedDataLength;
  };
  cdp.on('Network.responseReceived', onResponse);
  cdp.on('Network.loadingFinished', onFinished);
  await page.goto(url, { waitUntil: 'commit' });
  await page.waitForSelector('main[data-hydrated="true"]', { state: 'attached' });
  const ms = await page.evaluate(() => performance.now());
  // Let the last responses finish before counting (the poll for live changes is not part of the load).
  await page.waitForLoadState('load');
  cdp.off('Network.responseReceived', onResponse);
  cdp.off('Network.loadingFinished', onFinished);
  return { ms, bytes };
}

const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
const describe = (b) => {
  const assets = b.wasm + b.js + b.css + b.other;
  return `${kb(b.html + assets)} (HTML ${kb(b.html)}, WASM ${kb(b.wasm)}, JS ${kb(b.js)}, CSS ${kb(b.css)}, `
    + `other ${kb(b.other)}; assets ${kb(assets)}), and ${kb(b.data)} of server-fn data after hydration`;
};
const summary = (times) => {
  const sorted = [...times].sort((a, b) => a - b);
  const fmt = (v) => `${v.toFixed(0)} ms`;
  return `first ${fmt(times[0])}; of ${times.length}: min ${fmt(sorted[0])}, median ${fmt(sorted[Math.floor(sorted.length / 2)])}, max ${fmt(sorted[sorted.length - 1])}`;
};

// Loopback: cold once, then warm loads in the same browser.
let browserSide = await signedIn();
const cold = await load(browserSide);
const cells = await browserSide.page.locator('td.slot').count();
const warmTimes = [];
let warm;
for (let i = 0; i < LOADS; i++) {
  warm = await load(browserSide);
  warmTimes.push(warm.ms);
}
console.log(`cells on the page: ${cells}`);
console.log(`bytes on the wire, cold load: ${describe(cold.bytes)}`);
console.log(`bytes on the wire, warm load: ${describe(warm.bytes)}`);
console.log(`interactive on loopback, cold: ${cold.ms.toFixed(0)} ms; warm: ${summary(warmTimes)}`);
await browserSide.context.close();

// 10 Mbit/s, 40 ms round trips: each cold load in a fresh browser profile.
const coldTimes = [];
const throttledWarm = [];
for (let i = 0; i < 3; i++) {
  browserSide = await signedIn();
  await browserSide.cdp.send('Network.emulateNetworkConditions', {
    offline: false, latency: 40, downloadThroughput: 10e6 / 8, uploadThroughput: 10e6 / 8,
  });
  coldTimes.push((await load(browserSide)).ms);
  throttledWarm.push((await load(browserSide)).ms);
  await browserSide.context.close();
}
console.log(`interactive at 10 Mbit/s, 40 ms RTT, cold: ${summary(coldTimes)}`);
console.log(`interactive at 10 Mbit/s, 40 ms RTT, warm: ${summary(throttledWarm)}`);
await browser.close();
