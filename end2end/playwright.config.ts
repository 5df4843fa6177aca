import { defineConfig } from '@playwright/test';

// Debian's Chromium, never a downloaded browser. The flags keep it from
// reaching for the network, which this machine's sandbox refuses.
const port = Number(process.env.BERTH_E2E_PORT ?? 3190);
const databaseUrl = process.env.BERTH_E2E_DATABASE_URL;
if (!databaseUrl) throw new Error('BERTH_E2E_DATABASE_URL is not set; run the tests with `make test`');

export default defineConfig({
  testDir: './tests',
  timeout: 60_000,
  workers: 1,
  reporter: [['list']],
  globalSetup: './global-setup.ts',
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    browserName: 'chromium',
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: [
        '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
      ],
    },
  },
  webServer: {
    command: `../target/debug/berth serve --listen 127.0.0.1:${port} --site-root ../target/site`,
    url: `http://127.0.0.1:${port}/healthz`,
    env: { DATABASE_URL: databaseUrl, RUST_LOG: 'warn' },
    reuseExistingServer: false,
    timeout: 60_000,
  },
});
