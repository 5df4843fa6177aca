import { defineConfig } from '@playwright/test';

// Debian's Chromium, never a downloaded browser. The flags keep it from
// reaching for the network, which this machine's sandbox refuses.
const port = Number(process.env.BERTH_E2E_PORT ?? 3190);
// The OpenID provider the portal signs in with: npm oidc-provider, real and certified.
const opPort = Number(process.env.BERTH_E2E_OP_PORT ?? 4410);
const portal = `http://127.0.0.1:${port}`;
process.env.BERTH_E2E_BASE_URL = portal;
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
  webServer: [
    {
      command: 'node oidc/provider.mjs',
      url: `http://127.0.0.1:${opPort}/.well-known/openid-configuration`,
      env: {
        PORT: String(opPort),
        REDIRECT_URIS: `${portal}/auth/callback`,
        POST_LOGOUT_REDIRECT_URIS: `${portal}/`,
        CLIENT_SECRET: 'e2e-secret',
      },
      reuseExistingServer: false,
      timeout: 30_000,
    },
    {
      command: `../target/debug/berth serve --listen 127.0.0.1:${port} --site-root ../target/site`,
      url: `${portal}/healthz`,
      env: {
        DATABASE_URL: databaseUrl,
        RUST_LOG: 'warn',
        BERTH_PUBLIC_URL: portal,
        BERTH_OIDC_ISSUER: `http://127.0.0.1:${opPort}`,
        BERTH_OIDC_CLIENT_ID: 'berth',
        BERTH_OIDC_CLIENT_SECRET: 'e2e-secret',
        // Every test signs in from 127.0.0.1, dozens of times a minute; the
        // limit itself is tested in server/tests/it/abusive_clients.rs.
        BERTH_AUTH_RATE_LIMIT: '100000',
        // The same for a person's expensive requests (free view, sizing
        // helper, Open workspace): abusive_clients.rs tests that limit.
        BERTH_EXPENSIVE_RATE_LIMIT: '100000',
      },
      reuseExistingServer: false,
      timeout: 60_000,
    },
  ],
});
