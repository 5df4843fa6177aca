import { test, expect } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { collectErrors, signIn, sql } from './login';

// An AI assistant books through MCP with a token its person made for it:
// the Tokens page's scope, then npm's @modelcontextprotocol/sdk (the second
// client; the Rust tests drive PyPI's) against the portal's /mcp, and the
// booking on My bookings. In Berlin time, at both widths.

for (const width of [1440, 390]) {
  test(`a token that may book, made on the Tokens page, lets an assistant book but not cancel (${width} px)`, async ({ browser, baseURL }) => {
    const context = await browser.newContext({ timezoneId: 'Europe/Berlin', viewport: { width, height: 900 } });
    const page = await context.newPage();
    const errors = collectErrors(page);
    await signIn(page, 'ada');
    await page.goto('/tokens');
    await expect(page.locator('main[data-hydrated="true"]')).toBeAttached();
    const name = `assistant-${width}`;
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('May').selectOption('book');
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = (await page.locator('#new-token').textContent())!.trim();
    await expect(page.locator('#token-list tr', { hasText: name })).toContainText('read, book and extend; not cancel or end');
    const axe = await new AxeBuilder({ page }).analyze();
    expect(axe.violations.map((v) => v.id)).toEqual([]);

    const assistant = new Client({ name: 'e2e-assistant', version: '1.0' });
    await assistant.connect(new StreamableHTTPClientTransport(new URL('/mcp', baseURL), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }));
    const { tools } = await assistant.listTools();
    expect(tools.map((t) => t.name)).toEqual(
      ['list_pools', 'fit', 'find_free', 'book', 'my_bookings', 'booking', 'extend', 'end_now', 'cancel']);
    expect(tools.find((t) => t.name === 'cancel')!.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });

    const pool = sql("SELECT id FROM pool WHERE name = 'lab-h100'");
    // A window of its own, 25 days ahead (each width its own hour).
    const start = sql(`SELECT to_char(date_trunc('day', now()) + interval '25 days ${width === 390 ? 3 : 2} hours', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`);
    const end = sql(`SELECT to_char(timestamptz '${start}' + interval '1 hour', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`);
    const booked = await assistant.callTool({
      name: 'book',
      arguments: { pool_id: pool, kind: 'nvidia.com/mig-1g.24gb', quantity: 1, start, end, mode: 'interactive', idempotency_key: name },
    }) as { isError?: boolean, content: { type: string, text: string }[], structuredContent: { id: string } };
    expect(booked.isError).toBeFalsy();
    expect(booked.content[0].text).toBe(`Booked MIG 1g.24gb × 1 from ${start} to ${end}: approved.`);
    const id = booked.structuredContent.id;
    const refused = await assistant.callTool({ name: 'cancel', arguments: { id } }) as { isError?: boolean, content: { text: string }[] };
    expect(refused.isError).toBe(true);
    expect(refused.content[0].text).toBe('This token may read, book and extend; not cancel or end (scope book); use a token that may do more.');
    await assistant.close();

    // The portal shows it, as booked; it was not canceled.
    await page.goto(`/bookings/${id}`);
    await expect(page.locator('.booking-card')).toContainText('approved');
    await expect(page.locator('.booking-card')).toContainText('MIG 1g.24gb × 1');
    // Made through the assistant, with its token: the card says so (this
    // SDK names itself only at initialize; Berth remembers it for the token).
    await expect(page.locator('.booking-card .booked-via')).toHaveText(`Booked via e2e-assistant 1.0 with the API token “${name}”.`);
    expect(errors).toEqual([]);
    await context.close();
  });
}
