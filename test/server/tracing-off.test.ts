/**
 * Traces off (no OTEL_* variable asks for them): nothing is exported, the chat translator forwards no traceparent
 * (the passthrough forwards the caller's as it came), and no OpenTelemetry package is ever loaded.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { startFakeOpenAI } from '../fakes/openai.ts';
import { freePort } from '../helpers/free-port.ts';
import { chatConfig, postJson, startTestGateway } from '../helpers/gateway.ts';
import { hex, incoming, startCollector } from '../helpers/otlp-collector.ts';
import { REPO_ROOT } from '../helpers/process.ts';

describe('traces off', () => {
  const offSettings = [
    { name: 'OTEL_TRACES_EXPORTER=none', env: { OTEL_TRACES_EXPORTER: 'none' } },
    { name: 'OTEL_SDK_DISABLED=true', env: { OTEL_SDK_DISABLED: 'true' } },
  ];
  for (const off of offSettings) {
    test(`${off.name}, an endpoint set: nothing is exported and the chat translator forwards no traceparent`, async () => {
      const fake = await startFakeOpenAI();
      const collector = await startCollector();
      const gateway = await startTestGateway(chatConfig(fake.baseUrl), { env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '20', ...off.env } });
      try {
        const key = await gateway.createKey();
        const { traceId, parentId } = incoming();
        const response = await postJson(`${gateway.url}/v1/chat/completions`, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
          { authorization: `Bearer ${key}`, traceparent: `00-${traceId}-${parentId}-01` });
        assert.equal(response.status, 200);
        assert.equal(fake.requests.at(-1)!.headers.traceparent, undefined);
      } finally {
        // close() flushes whatever a tracer would have buffered: nothing may arrive even then.
        await gateway.close();
        await fake.close();
        await collector.close();
      }
      assert.equal(collector.payloads.length, 0);
    });
  }

  test('/proxy forwards the caller\'s traceparent as it came', async () => {
    const fake = await startFakeOpenAI();
    const gateway = await startTestGateway(chatConfig(fake.baseUrl), { env: {} });
    try {
      const key = await gateway.createKey({ scopes: { capabilities: ['proxy'] } });
      const traceparent = `00-${hex(16)}-${hex(8)}-01`;
      const response = await postJson(`${gateway.url}/proxy/openai/chat/completions`, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
        { authorization: `Bearer ${key}`, traceparent, tracestate: 'vendor=abc' });
      assert.equal(response.status, 200);
      assert.equal(fake.requests.at(-1)!.headers.traceparent, traceparent);
      assert.equal(fake.requests.at(-1)!.headers.tracestate, 'vendor=abc');
    } finally {
      await gateway.close();
      await fake.close();
    }
  });

  test('the OpenTelemetry packages are not loaded by a gateway serving a request without them, and are with them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aigw-tracing-off-'));
    try {
      await writeFile(join(dir, 'hooks.mjs'), `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  if (specifier.startsWith('@opentelemetry/')) appendFileSync(process.env.RESOLVED_LOG, specifier + '\\n');
  return next(specifier, context);
}`);
      await writeFile(join(dir, 'register.mjs'), `import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n`);
      const repo = (path: string) => JSON.stringify(pathToFileURL(join(REPO_ROOT, path)).href);
      await writeFile(join(dir, 'serve.mts'), `
import { startFakeOpenAI } from ${repo('test/fakes/openai.ts')};
import { chatConfig, postJson, startTestGateway } from ${repo('test/helpers/gateway.ts')};
const fake = await startFakeOpenAI();
const env = process.argv[2] === 'on' ? { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:${await freePort()}', OTEL_BSP_EXPORT_TIMEOUT: '1000' } : {};
const gateway = await startTestGateway(chatConfig(fake.baseUrl), { env });
const key = await gateway.createKey();
const response = await postJson(gateway.url + '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }, { authorization: 'Bearer ' + key });
await gateway.close();
await fake.close();
if (response.status !== 200) throw new Error('status ' + response.status);
`);
      const run = async (mode: 'on' | 'off') => {
        const log = join(dir, `resolved-${mode}.log`);
        await writeFile(log, '');
        const child = spawn(process.execPath, ['--import', 'tsx', '--import', pathToFileURL(join(dir, 'register.mjs')).href, join(dir, 'serve.mts'), mode], {
          cwd: REPO_ROOT, env: { ...process.env, RESOLVED_LOG: log, OTEL_SDK_DISABLED: undefined, OTEL_TRACES_EXPORTER: undefined }, stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
        const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
        assert.equal(code, 0, stderr);
        return (await readFile(log, 'utf8')).split('\n').filter(Boolean);
      };
      // The two processes run side by side: each compiles the gateway's source as it loads, which is most of their time.
      const [unloaded, loaded] = await Promise.all([run('off'), run('on')]);
      assert.deepEqual(unloaded, []);
      assert.ok(loaded.includes('@opentelemetry/sdk-trace-base'), `the hook sees the SDK when it is used: ${loaded.join(', ')}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
