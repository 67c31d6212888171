/**
 * The API explorer (`gateway.docs`, docs/getting-started.md "The API explorer") in a real browser:
 * headless Chromium (Debian's `chromium`, driven by playwright-core) opens /docs of a gateway over
 * the test database (two tenants, RLS forced, the RLS-bound app role). Without a token the page
 * shows nothing of the schema; with tenant A's token it lists exactly the paths of A's own OpenAPI
 * document, runs a list request from the page and shows A's rows and none of B's. Every asset
 * comes from the gateway's origin, under a Content-Security-Policy the page never violates. A
 * screenshot goes to __tests__/output/.
 * Skipped, saying why, where chromium is not installed.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import request from 'supertest';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { createGateway, type Gateway } from '../../lib';
import { createTestDatabase, TENANT_A, TENANT_B, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';
import { tokenA } from '../support/gateway-app';
import { describeIfPresent, isProgram, SETUP_SYSTEM } from '../support/skips';

const chromiumPath = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const describeWithChromium = describeIfPresent('the API explorer in headless Chromium (docs-explorer.test.ts)', [isProgram(chromiumPath) ? '' : `Chromium at ${chromiumPath} (or CHROMIUM_PATH)`], SETUP_SYSTEM);
const outputDir = path.resolve(__dirname, '../output');

describeWithChromium('the API explorer at /docs, in headless Chromium', () => {
  let db: TestDatabase;
  let gateway: Gateway;
  let server: http.Server;
  let base: string;
  let profile: string;
  let browser: BrowserContext;
  /** Every request the page made, and what the console said about the Content-Security-Policy. */
  const requested: string[] = [];
  const violations: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET });
    await gateway.ready;
    const app = express().use('/api', gateway).use('/docs', gateway.docs);
    server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      viewport: { width: 1280, height: 1600 },
    });
  }, 60000);

  afterAll(async () => {
    await browser?.close();
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
    await new Promise((resolve) => server?.close(resolve));
    await gateway?.close();
    await db?.drop();
  });

  async function open(): Promise<Page> {
    const page = await browser.newPage();
    // Swagger UI renders a document of a few hundred operations; on a busy 2-core machine that takes a while.
    page.setDefaultTimeout(120000);
    page.on('request', (r) => requested.push(r.url()));
    page.on('console', (m) => {
      if (/Content.Security.Policy/i.test(m.text())) violations.push(m.text());
    });
    await page.goto(`${base}/docs`);
    await page.waitForSelector('#swagger-ui .swagger-ui');
    return page;
  }

  it('serves the page with a Content-Security-Policy, and the assets from the installed package', async () => {
    const res = await request(server).get('/docs/');
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'",
    );
    expect(res.text).not.toMatch(/https?:\/\//);
    expect((await request(server).get('/docs')).headers['location']).toBe('/docs/');
    const bundle = await request(server).get('/docs/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
    expect(bundle.body.length ?? bundle.text.length).toBeGreaterThan(100000);
  });

  it('shows nothing of the schema without a token', async () => {
    const page = await open();
    await page.waitForSelector('text=/Failed to load API definition|Unauthorized|401/');
    const text = await page.locator('#swagger-ui').innerText();
    expect(text).not.toMatch(/orders|users|order_items/);
    expect(await page.locator('.opblock').count()).toBe(0);
    await page.close();
  }, 180000);

  it('lists the caller\'s tables with a token, runs a list request and shows only that tenant\'s rows', async () => {
    const own = await request(server).get('/api/openapi.json').set('Authorization', `Bearer ${tokenA}`);
    expect(own.status).toBe(200);
    const ownPaths = Object.keys(own.body.paths as Record<string, unknown>).sort();
    expect(ownPaths).toContain('/orders');

    const page = await open();
    fs.mkdirSync(outputDir, { recursive: true });
    await page.fill('#tablegate-token-input', tokenA);
    await page.click('#tablegate-token button[type=submit]');
    await page.waitForSelector('.opblock');
    await page.screenshot({ path: path.join(outputDir, 'docs-explorer-tables.png') });
    // Every operation's tag group open, then every path the page shows, scrolling down the page
    // as a reader would (Swagger UI renders a long document's operations as they come into view).
    const shown = new Set<string>();
    for (let step = 0, before = -1; step < 60 && shown.size !== before; step++) {
      before = shown.size;
      for (const p of await page.locator('.opblock-summary-path').evaluateAll((els) => els.map((e) => (e.getAttribute('data-path') ?? e.textContent ?? '').replace(/\u200b/g, '')))) shown.add(p);
      await page.evaluate('window.scrollBy(0, window.innerHeight)');
      await page.waitForTimeout(150);
    }
    expect([...shown].sort()).toEqual(ownPaths);

    // Run GET /orders from the page, with limit=5.
    const list = page.locator('.opblock-get').filter({ has: page.locator('.opblock-summary-path[data-path="/orders"]') }).first();
    // Back to the top, then down until the operation is rendered.
    await page.evaluate('window.scrollTo(0, 0)');
    for (let step = 0; step < 60 && (await list.count()) === 0; step++) {
      await page.evaluate('window.scrollBy(0, window.innerHeight / 2)');
      await page.waitForTimeout(150);
    }
    await list.locator('.opblock-summary').click();
    const tryOut = list.locator('button.try-out__btn');
    if ((await tryOut.count()) > 0 && /try it out/i.test(await tryOut.innerText())) await tryOut.click();
    await list.locator('tr[data-param-name="limit"] input').fill('5');
    await list.locator('button.execute').click();
    const body = list.locator('.live-responses-table .response-col_description pre').first();
    await body.waitFor();
    const payload = JSON.parse(await body.innerText()) as { data: { tenant_id: string }[] };
    expect(payload.data).toHaveLength(5);
    expect(payload.data.every((row) => row.tenant_id === TENANT_A)).toBe(true);
    expect(await list.locator('.live-responses-table').innerText()).not.toContain(TENANT_B);

    await page.screenshot({ path: path.join(outputDir, 'docs-explorer.png'), fullPage: false });
    await page.close();

    // Nothing from another origin, and nothing the policy had to block.
    expect(requested.filter((url) => !url.startsWith(base))).toEqual([]);
    expect(violations).toEqual([]);
  }, 300000);
});
