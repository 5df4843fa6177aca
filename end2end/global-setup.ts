import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

// Seeds the demo pools, their history and a user through the real CLI, and keeps that user's
// API token where the tests read it.
export default function globalSetup() {
  const env = { ...process.env, DATABASE_URL: process.env.BERTH_E2E_DATABASE_URL };
  const berth = (...args: string[]) => execFileSync('../target/debug/berth', args, { env, encoding: 'utf8' });
  // With the demo's month of history, ended on a fixed day in a past year:
  // the same month whenever the tests run, and always "another year", so
  // looks.spec.ts photographs the same pages every time.
  berth('seed-demo', '--history', '--history-until', '2025-11-01');
  berth('user', 'add', '--email', 'e2e@berth.test', '--name', 'E2E User', '--tenant', 'e2e');
  // An account an admin created by email, whose address the provider's `eve` claims unverified.
  berth('user', 'add', '--email', 'victim@example.test', '--name', 'Victim', '--role', 'admin', '--tenant', 'ops');
  const token = berth('token', 'create', '--email', 'e2e@berth.test', '--expires-in', '1h').trim();
  writeFileSync('test-results-token.txt', token);
}
