/**
 * The usage plugin in a gateway process: SIGTERM in the middle of a stream leaves exactly one usage record,
 * written before the process exits, whether the stream drains to its end or the shutdown deadline cuts it.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openDatabase } from '../../core/store/database.ts';
import { helloStreamEvents, sleep, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { freshDataDir } from '../helpers/data-dir.ts';
import { ADMIN_TOKEN, postJson } from '../helpers/gateway.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { usageConfig } from '../helpers/usage.ts';

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The records of a data folder, read after the gateway that held it has exited. */
async function recordsIn(dataDir: string, requestId: string): Promise<Array<Record<string, any>>> {
  const db = await openDatabase({ dataDir });
  try {
    return await db.query('SELECT * FROM usage_records WHERE request_id = $1', [requestId]);
  } finally {
    await db.close();
  }
}

describe('usage records across a SIGTERM', () => {
  let fake: FakeOpenAI;
  let dir: string;
  const dataDirs: string[] = [];
  const running: GatewayProcess[] = [];

  before(async () => {
    fake = await startFakeOpenAI();
    dir = await mkdtemp(join(tmpdir(), 'aigw-usage-process-'));
  });
  after(async () => {
    for (const gateway of running) if (gateway.child.exitCode === null && gateway.child.signalCode === null) gateway.child.kill('SIGKILL');
    await Promise.all(running.map((g) => g.exited));
    await fake.close();
    for (const path of [dir, ...dataDirs]) await rm(path, { recursive: true, force: true });
  });

  /** A gateway process with the usage plugin (records flushed only at shutdown), a key, and a stream at its first chunk. */
  async function streamThenSigterm(server: string) {
    const configFile = join(dir, `${randomUUID()}.yaml`);
    await writeFile(configFile, `${usageConfig(fake.baseUrl, '- usage:\n    flushIntervalMs: 600000')}${server}`);
    const dataDir = await freshDataDir();
    dataDirs.push(dataDir);
    const gateway = await startGatewayProcess(configFile, { AIGW_DATA_DIR: dataDir, AIGW_ADMIN_TOKEN: ADMIN_TOKEN });
    running.push(gateway);
    const created = await postJson(`${gateway.url}/admin/v1/keys`, { name: 'usage-process' }, { authorization: `Bearer ${ADMIN_TOKEN}` });
    assert.equal(created.status, 201);
    const requestId = randomUUID();
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${created.body.key}`, 'content-type': 'application/json', 'x-request-id': requestId },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = decoder.decode((await reader.read()).value, { stream: true });
    assert.match(text, /chat\.completion\.chunk/);
    gateway.child.kill('SIGTERM');
    const rest = (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return text;
          text += decoder.decode(value, { stream: true });
        }
      } catch {
        return text; // the connection was cut
      }
    })();
    return { gateway, dataDir, requestId, rest };
  }

  test('the stream drains to its end: one completed record with the usage of its last chunk', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    fake.handle(async (req, res) => {
      const events = helloStreamEvents(req.body, ['one', ' two', ' three']);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(events[0]);
      await released;
      for (const event of events.slice(1)) {
        res.write(event);
        await sleep(10);
      }
      res.end();
    });
    try {
      const { gateway, dataDir, requestId, rest } = await streamThenSigterm('');
      await sleep(200);
      assert.equal(gateway.child.exitCode, null, 'the process waits for its stream');
      release();
      const text = await within(rest, 10_000, 'the rest of the stream');
      assert.ok(text.endsWith('data: [DONE]\n\n'));
      assert.equal(await within(gateway.exited, 20_000, 'exit after the drain'), 0);

      const rows = await recordsIn(dataDir, requestId);
      assert.equal(rows.length, 1, JSON.stringify(rows));
      assert.equal(rows[0]!.status, 'completed');
      assert.deepEqual([Number(rows[0]!.prompt_tokens), Number(rows[0]!.completion_tokens)], [9, 3]);
      assert.equal(rows[0]!.estimated, false);
    } finally {
      release();
      fake.reset();
    }
  });

  test('the shutdown deadline cuts the stream: one aborted record with the tokens sent so far', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    fake.handle(async (req, res) => {
      const events = helloStreamEvents(req.body, ['Hello', ' world']);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(events[0]! + events[1]!);
      await released; // never before the deadline
      res.end();
    });
    try {
      const { gateway, dataDir, requestId, rest } = await streamThenSigterm('server:\n  shutdownTimeoutMs: 500\n');
      const text = await within(rest, 10_000, 'the cut');
      assert.doesNotMatch(text, /\[DONE\]/);
      assert.equal(await within(gateway.exited, 20_000, 'exit after the deadline'), 0);
      assert.ok(gateway.logs.some((l) => l.msg === 'shutdown deadline reached: closing remaining connections'));

      const rows = await recordsIn(dataDir, requestId);
      assert.equal(rows.length, 1, JSON.stringify(rows));
      assert.equal(rows[0]!.status, 'aborted');
      assert.equal(rows[0]!.estimated, true);
      assert.equal(Number(rows[0]!.completion_tokens), 1, '"Hello" had been sent');
      assert.ok(Number(rows[0]!.prompt_tokens) > 0);
    } finally {
      release();
      fake.reset();
    }
  });
});
