/**
 * The admin UI at /ui in headless Chromium: sign in (a wrong token first, shown the API's message), create a
 * key and read its plaintext once, see it listed, revoke it, open the usage chart and the providers. Each step
 * is a screenshot in test-output/ui/. Also: the headers the files are served with, no path out of the build,
 * /ui off without the admin API, and a 503 saying what to run when the UI is not built.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { buildUi } from '../../scripts/build-ui.mjs';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { launchChromium, Screenshots, VIEWPORT } from '../helpers/browser.ts';
import { ADMIN_TOKEN, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { auditRows } from '../helpers/audit.ts';
import { createKey, recordsOf, usageConfig } from '../helpers/usage.ts';

/** A GET with the path sent exactly as written (fetch would resolve the dots away). */
function rawGet(base: string, path: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    request({ hostname, port, path, method: 'GET' }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8') }));
    }).on('error', reject).end();
  });
}

const today = () => new Date().toISOString().slice(0, 10);

async function signIn(page: Page, url: string): Promise<void> {
  await page.goto(`${url}/ui`);
  await page.getByLabel('Admin token or admin JWT').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Keys', level: 1 }).waitFor();
}

describe('the admin UI at /ui', { timeout: 60_000 }, () => {
  let uiDir: string;
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let browser: Browser;

  before(async () => {
    // Built into a folder of this test's own: dist/ may be in use by other tests.
    uiDir = await mkdtemp(join(tmpdir(), 'aigw-ui-'));
    await buildUi(uiDir);
    fake = await startFakeOpenAI();
    gw = await startTestGateway(usageConfig(fake.baseUrl, '- budget\n- usage\n- audit'), { uiDir });
    const caller = await createKey(gw);
    for (let i = 0; i < 2; i += 1) {
      const requestId = randomUUID();
      const answer = await postJson(`${gw.url}/v1/chat/completions`, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
        { authorization: `Bearer ${caller.key}`, 'x-request-id': requestId });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal((await recordsOf(gw, requestId)).length, 1);
    }
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    await fake?.close();
    if (uiDir) await rm(uiDir, { recursive: true, force: true });
  });

  test('files are served with a strict CSP, no framing, no sniffing, and ETags', async () => {
    const page = await fetch(`${gw.url}/ui`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
    const html = await page.text();
    assert.doesNotMatch(html, /<script>(?!<\/script>)|<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');

    const script = await fetch(`${gw.url}/ui/assets/app.js`);
    assert.equal(script.status, 200);
    assert.match(script.headers.get('content-type') ?? '', /^text\/javascript/);
    const etag = script.headers.get('etag');
    assert.ok(etag);
    assert.equal((await fetch(`${gw.url}/ui/assets/app.js`, { headers: { 'if-none-match': etag } })).status, 304);
    assert.match((await fetch(`${gw.url}/ui/assets/style.css`)).headers.get('content-type') ?? '', /^text\/css/);
  });

  test('no path under /ui/assets leaves the build', async () => {
    for (const path of ['/ui/assets/..%2f..%2fpackage.json', '/ui/assets/%2e%2e%2findex.html', '/ui/assets/../index.html',
      '/ui/assets/%2e%2e', '/ui/assets/.hidden.js', '/ui/assets/missing.js', '/ui/assets/..\\..\\package.json']) {
      const answer = await rawGet(gw.url, path);
      assert.equal(answer.status, 404, `${path}: ${answer.body}`);
      assert.doesNotMatch(answer.body, /"name": "aigw"|<!doctype/i, path);
    }
  });

  test('signs in, creates a key shown once, lists and revokes it, charts usage, lists providers', async () => {
    const shots = new Screenshots('ui');
    const context = await browser.newContext({ viewport: VIEWPORT });
    const page: Page = await context.newPage();
    const seen: string[] = [];
    page.on('pageerror', (err) => seen.push(err.message));
    page.on('console', (message) => { if (message.type() === 'error') seen.push(message.text()); });
    await shots.measureBlank(page);

    await page.goto(`${gw.url}/ui`);
    await page.getByLabel('Admin token or admin JWT').fill('not-the-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Invalid admin token' }).waitFor();
    await shots.take(page, 'wrong-token');

    await page.getByLabel('Admin token or admin JWT').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Keys', level: 1 }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('aigw.adminToken')), ADMIN_TOKEN);
    assert.equal(await page.evaluate(() => localStorage.length), 0);
    assert.ok(!page.url().includes(ADMIN_TOKEN));
    await page.getByRole('table', { name: 'Keys' }).waitFor();
    await shots.take(page, 'signed-in');

    await page.getByLabel('Name').fill('ui-created-key');
    await page.getByLabel('Requests per minute').first().fill('60');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByRole('dialog', { name: 'Key "ui-created-key" created' });
    await shown.getByText('It is not shown again').waitFor();
    const plaintext = await shown.getByLabel('The new key').inputValue();
    assert.ok(plaintext.length > 20, plaintext);
    await shots.take(page, 'key-created');
    // The key shown works, until it is revoked below.
    const ping = () => postJson(`${gw.url}/v1/chat/completions`, { model: 'plain', messages: [{ role: 'user', content: 'hi' }] }, { authorization: `Bearer ${plaintext}` });
    assert.equal((await ping()).status, 200);
    await shown.getByRole('button', { name: 'I have saved it, close' }).click();
    assert.equal(await page.getByLabel('The new key').count(), 0, 'the plaintext is gone once the dialog closes');

    const row = page.getByRole('row').filter({ hasText: 'ui-created-key' });
    await row.getByText('active').waitFor();
    assert.match(await row.innerText(), /60\/min/);
    await shots.take(page, 'key-listed');

    await row.getByRole('button', { name: 'Revoke ui-created-key' }).click();
    await page.getByRole('dialog', { name: 'Revoke key "ui-created-key"?' }).getByRole('button', { name: 'Yes, revoke' }).click();
    await row.getByText('revoked').waitFor();
    await page.getByRole('status').filter({ hasText: 'Key "ui-created-key" revoked.' }).waitFor();
    await shots.take(page, 'key-revoked');
    assert.equal((await ping()).status, 401);

    await page.getByRole('link', { name: 'Usage' }).click();
    const point = page.locator(`svg circle.point[data-day="${today()}"][data-series="gpt-4o-mini"]`);
    await point.first().waitFor();
    assert.equal(await point.count(), 2, 'a point on the cost chart and one on the tokens chart');
    const costs = await point.evaluateAll((points) => points.map((p) => Number(p.getAttribute('data-value'))));
    assert.ok(costs.every((value) => value > 0), JSON.stringify(costs));
    await page.getByRole('table', { name: 'Usage' }).getByText('gpt-4o-mini').waitFor();
    await shots.take(page, 'usage-by-model');

    await page.getByLabel('Group by').selectOption('provider');
    await page.locator(`svg circle.point[data-day="${today()}"][data-series="openai"]`).first().waitFor();
    await shots.take(page, 'usage-by-provider');

    await page.getByRole('link', { name: 'Providers' }).click();
    const openai = page.getByRole('table', { name: 'Providers' }).getByRole('row').filter({ hasText: 'openai' });
    await openai.getByText('closed').waitFor();
    assert.match(await openai.innerText(), /gpt-4o-mini, plain/);
    await shots.take(page, 'providers');

    await page.getByRole('link', { name: 'Budgets' }).click();
    await page.getByRole('heading', { name: 'Budgets', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Create budget' }).waitFor();
    await shots.take(page, 'budgets');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('aigw.adminToken')), null);
    assert.deepEqual(seen.filter((text) => !/status of 40[14]/.test(text)), [], 'no script errors on the page');
    await context.close();
  });

  test('changes a key\'s limits, refuses a bad policy with the API\'s message, shows a budget\'s spend and the audit log', async () => {
    const shots = new Screenshots('ui-more');
    const context = await browser.newContext({ viewport: VIEWPORT });
    const page = await context.newPage();
    await shots.measureBlank(page);
    await signIn(page, gw.url);

    const row = page.getByRole('row').filter({ hasText: 'usage-test' });
    await row.getByRole('button', { name: 'Edit limits of usage-test' }).click();
    const limits = page.getByRole('dialog', { name: 'Rate limits of "usage-test"' });
    await limits.getByLabel('Requests per day').fill('500');
    await shots.take(page, 'edit-limits');
    await limits.getByRole('button', { name: 'Save limits' }).click();
    await row.getByText('500/day').waitFor();
    const stored = await (await fetch(`${gw.url}/admin/v1/keys?limit=100`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json() as any;
    assert.deepEqual(stored.data.find((k: any) => k.name === 'usage-test').rateLimits, { requestsPerDay: 500 });

    await page.getByRole('link', { name: 'Tenants & organizations' }).click();
    await page.getByLabel('Name').first().waitFor();
    const orgForm = page.getByRole('form', { name: 'Create organization' });
    await orgForm.getByLabel('Name').fill('Research');
    await orgForm.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('button', { name: 'Policy of Research' }).click();
    const policy = page.getByRole('dialog', { name: 'Policy of "Research"' });
    await policy.getByLabel(/^Policy/).fill('{"rateLimits": {"requestsPerMinute": 0}}');
    await policy.getByRole('button', { name: 'Save policy' }).click();
    await policy.getByRole('alert').filter({ hasText: 'VALIDATION_ERROR' }).waitFor();
    assert.match(await policy.getByRole('alert').innerText(), /requestsPerMinute/);
    await shots.take(page, 'policy-refused');
    await policy.getByLabel(/^Policy/).fill('{"models": ["plain"]}');
    await policy.getByRole('button', { name: 'Save policy' }).click();
    await policy.getByRole('status').filter({ hasText: 'Policy saved.' }).waitFor();
    await policy.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('table', { name: 'Organizations' }).getByText('{"models":["plain"]}').waitFor();
    await shots.take(page, 'directory');

    await page.getByRole('link', { name: 'Budgets' }).click();
    await page.getByLabel('Limit (USD)').fill('0.0001');
    await page.getByRole('button', { name: 'Create budget' }).click();
    const budget = page.getByRole('table', { name: 'Budgets' }).getByRole('row').filter({ hasText: 'deployment' });
    // The budget counts this period's spend, the two chat requests of before() included.
    await budget.getByRole('img', { name: /^[1-9]\d*% of the limit spent$/ }).waitFor();
    await shots.take(page, 'budget');

    await auditRows(gw); // the recorder writes in batches: flushed, the admin writes above are in the table
    await page.getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('table', { name: 'Audit records' }).getByText('POST /admin/v1/keys/').first().waitFor();
    await shots.take(page, 'audit');
    await context.close();
  });
});

describe('/ui without the admin API, or without a build', { timeout: 60_000 }, () => {
  test('is 404 NOT_FOUND when the admin API is off, and 503 naming npm run build when dist/ui is missing', async () => {
    const fake = await startFakeOpenAI();
    const missing = join(tmpdir(), `aigw-no-ui-${randomUUID()}`);
    const off = await startTestGateway(usageConfig(fake.baseUrl), { env: { AIGW_ADMIN_TOKEN: '' }, uiDir: missing });
    const unbuilt = await startTestGateway(usageConfig(fake.baseUrl), { uiDir: missing });
    try {
      for (const path of ['/ui', '/ui/', '/ui/assets/app.js']) {
        const answer = await fetch(`${off.url}${path}`);
        assert.equal(answer.status, 404, path);
        assert.equal(((await answer.json()) as any).error.code, 'NOT_FOUND');
      }
      const answer = await fetch(`${unbuilt.url}/ui`);
      assert.equal(answer.status, 503);
      assert.match(await answer.text(), /npm run build/);
      assert.equal((await fetch(`${unbuilt.url}/ui/assets/app.js`)).status, 404);
    } finally {
      await off.close();
      await unbuilt.close();
      await fake.close();
    }
  });
});
