/**
 * The plugin runner's contract, end to end: third-party plugin modules (.mjs) written beside the config, a
 * real in-process gateway, and a loopback fake upstream. The plugins report to the test through one object
 * on globalThis (they run in this process), reset before every test.
 */
import assert from 'node:assert/strict';
import { access, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { ChatCompletion, ChatCompletionChunk } from '../../core/canonical/chat.ts';
import type { StreamOutcome } from '../../core/pipeline/context.ts';
import type { Database } from '../../core/store/database.ts';
import { completion, helloStreamEvents, sleep, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

/** What the plugins write; `globalThis.__aigwRunnerTest` in the plugin modules. */
interface Probe {
  order: string[];
  /** Plugins listed after an early answer record here if they run (they must not). */
  ran: string[];
  outerSaw?: ChatCompletion | null;
  chunks: ChatCompletionChunk[];
  outcomes: StreamOutcome[];
  /** Filled by setups that fail the boot: what the gateway handed them, to check it was released. */
  boot?: { calledAt: number; dataDir: string; configDir: string; db: Database };
}

const PROBE = '__aigwRunnerTest';
const slot = globalThis as unknown as Record<typeof PROBE, Probe>;
const probe = (): Probe => slot[PROBE];

beforeEach(() => {
  slot[PROBE] = { order: [], ran: [], chunks: [], outcomes: [] };
});

/** A plugin module: a plain object, no config, and the given setup (source text of a method). */
function pluginModule(name: string, setup: string, prelude = ''): string {
  return `${prelude}
const probe = () => globalThis.${PROBE};
export default {
  apiVersion: 1,
  name: ${JSON.stringify(name)},
  description: 'runner test plugin ${name}',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  ${setup.trim()},
};
`;
}

/** The gateway config: the modules under `plugins:`, one model, and the chat pipeline as given. */
function config(baseUrl: string, modules: string[], pipeline: string[], server = ''): string {
  return `plugins: [${modules.join(', ')}]
${server}
providers:
  openai:
    baseUrl: ${baseUrl}
    apiKey: sk-upstream-secret
models:
  - id: plain
    provider: openai
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [${pipeline.join(', ')}]
`;
}

/** Rejects with `message` when `promise` has not settled within `ms`; the timer never outlives it. */
async function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function waitFor(condition: () => boolean, ms: number, message: string): Promise<void> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) throw new Error(message);
    await sleep(5);
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Reads a text/event-stream response one `data:` event at a time. */
class SseReader {
  private readonly decoder = new TextDecoder();
  private buffer = '';
  private ended = false;
  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  /** The data of the next event, or null at the end of the stream. */
  async next(): Promise<string | null> {
    for (;;) {
      const end = this.buffer.indexOf('\n\n');
      if (end !== -1) {
        const event = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        assert.ok(event.startsWith('data: ') && !event.includes('\n'), `unexpected event: ${JSON.stringify(event)}`);
        return event.slice('data: '.length);
      }
      if (this.ended) {
        assert.equal(this.buffer, '', 'the stream ended inside an event');
        return null;
      }
      const { done, value } = await this.reader.read();
      if (done) this.ended = true;
      else this.buffer += this.decoder.decode(value, { stream: true });
    }
  }

  async rest(): Promise<string[]> {
    const events: string[] = [];
    for (let event = await this.next(); event !== null; event = await this.next()) events.push(event);
    return events;
  }
}

/** The canonical chunks of an SSE script from the fake: every data event but [DONE], parsed. */
function chunksOf(events: string[]): ChatCompletionChunk[] {
  return events
    .filter((e) => e !== 'data: [DONE]\n\n')
    .map((e) => JSON.parse(e.slice('data: '.length, -2)) as ChatCompletionChunk);
}

const HELLO = { model: 'plain', messages: [{ role: 'user', content: 'hi' }] };

describe('onion order', () => {
  const A = pluginModule('onion-a', `
  setup() {
    return async (ctx, next) => {
      probe().order.push('A:before');
      await next();
      probe().order.push('A:after');
    };
  }`);
  const B = pluginModule('onion-b', `
  setup() {
    return async (ctx, next) => {
      probe().order.push('B:before');
      await next();
      probe().order.push('B:after');
    };
  }`);

  let fake: FakeOpenAI;
  let gw: TestGateway;
  let key: string;
  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(config(fake.baseUrl, ['./onion-a.mjs', './onion-b.mjs'], ['auth', 'onion-a', 'onion-b']), {
      files: { 'onion-a.mjs': A, 'onion-b.mjs': B },
    });
    key = await gw.createKey();
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('A then B: A:before, B:before, (upstream), B:after, A:after', async () => {
    let orderAtUpstream: string[] | undefined;
    fake.handle((req, res) => {
      orderAtUpstream = [...probe().order];
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(completion(String(req.body.model), 'Hello world')));
    });
    try {
      const response = await postJson(`${gw.url}/v1/chat/completions`, HELLO, { authorization: `Bearer ${key}` });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(response.body, completion('plain', 'Hello world'));
      assert.deepEqual(probe().order, ['A:before', 'B:before', 'B:after', 'A:after']);
      assert.deepEqual(orderAtUpstream, ['A:before', 'B:before'], 'the dispatcher runs after the last plugin, inside the onion');
      assert.equal(fake.requests.length, 1);
    } finally {
      fake.reset();
    }
  });
});

describe('answering early', () => {
  const CANNED: ChatCompletion = {
    id: 'chatcmpl-canned-42',
    object: 'chat.completion',
    created: 1_700_000_123,
    model: 'plain',
    choices: [{ index: 0, message: { role: 'assistant', content: 'from the plugin' }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 1, completion_tokens: 3, total_tokens: 4 },
  };
  // Listed before the canned answer: sees it on the way out.
  const OUTER = pluginModule('outer', `
  setup() {
    return async (ctx, next) => {
      await next();
      const gw = ctx.state.gw;
      probe().outerSaw = gw.result ?? null;
      ctx.set('X-Outer-Saw', gw.result ? gw.result.id : 'nothing');
    };
  }`);
  const CANNED_PLUGIN = pluginModule('canned', `
  setup() {
    return async (ctx) => {
      ctx.state.gw.result = ${JSON.stringify(CANNED)};
    };
  }`);
  // Listed after the canned answer: never reached.
  const SKIPPED = pluginModule('skipped', `
  setup() {
    return async (ctx, next) => {
      probe().ran.push('skipped');
      await next();
    };
  }`);

  let fake: FakeOpenAI;
  let gw: TestGateway;
  let key: string;
  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(
      config(fake.baseUrl, ['./outer.mjs', './canned.mjs', './skipped.mjs'], ['auth', 'outer', 'canned', 'skipped']),
      { files: { 'outer.mjs': OUTER, 'canned.mjs': CANNED_PLUGIN, 'skipped.mjs': SKIPPED } },
    );
    key = await gw.createKey();
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('a plugin that sets gw.result and does not call next(): no upstream call, 200 with its body, seen by the plugin before it', async () => {
    const response = await postJson(`${gw.url}/v1/chat/completions`, HELLO, { authorization: `Bearer ${key}` });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.deepEqual(response.body, CANNED);
    assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(fake.requests.length, 0, 'the upstream must not be called');
    assert.equal(response.headers.get('x-outer-saw'), 'chatcmpl-canned-42');
    assert.deepEqual(probe().outerSaw, CANNED);
    assert.deepEqual(probe().ran, [], 'plugins listed after the early answer do not run');
    // X-Provider and X-Model are set only when the dispatcher ran.
    assert.equal(response.headers.get('x-provider'), null);
    assert.equal(response.headers.get('x-model'), null);
  });
});

describe("response stages that observe", () => {
  const TAPPER = pluginModule('tapper', `
  setup() {
    return async (ctx, next) => {
      ctx.state.gw.stage({
        chunk(chunk) {
          probe().chunks.push(structuredClone(chunk));
        },
        complete(outcome) {
          probe().outcomes.push(outcome);
        },
      });
      await next();
    };
  }`);

  let fake: FakeOpenAI;
  let gw: TestGateway;
  let key: string;
  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(config(fake.baseUrl, ['./tapper.mjs'], ['auth', 'tapper']), { files: { 'tapper.mjs': TAPPER } });
    key = await gw.createKey();
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  const streamRequest = (signal?: AbortSignal) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...HELLO, stream: true, stream_options: { include_usage: true } }),
      ...(signal ? { signal } : {}),
    });

  test('chunk() once per canonical chunk in order, complete() once with the usage, and nothing is buffered', async () => {
    // The upstream writes the first event, then waits until the client has received it before writing the
    // rest: a gateway that held the stream back would never let the client see it, and both waits time out.
    const clientGotFirst = deferred();
    let upstreamFailure: unknown;
    fake.handle(async (req, res) => {
      const events = helloStreamEvents(req.body);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(events[0]);
      try {
        await within(clientGotFirst.promise, 5000, 'the client did not get the first chunk within 5 s');
      } catch (err) {
        upstreamFailure = err;
        throw err;
      }
      for (const event of events.slice(1)) res.write(event);
      res.end();
    });
    try {
      const response = await within(streamRequest(), 5000, 'no response within 5 s: the gateway holds the stream back');
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'text/event-stream');
      const sse = new SseReader(response.body!.getReader());
      const first = await within(sse.next(), 5000, 'the client did not receive the first chunk within 5 s: the gateway buffers the stream');
      assert.ok(first !== null, 'the stream ended before its first chunk');

      // Right now the upstream has sent one event: the tap has seen exactly that one, and no completion.
      assert.equal(probe().chunks.length, 1);
      assert.equal(probe().outcomes.length, 0);
      clientGotFirst.resolve();

      const rest = await within(sse.rest(), 5000, 'the rest of the stream did not arrive within 5 s');
      assert.equal(upstreamFailure, undefined);

      const upstreamChunks = chunksOf(helloStreamEvents(fake.requests[0]!.body));
      assert.equal(upstreamChunks.length, 5, 'role, "Hello", " world", stop, usage');
      assert.deepEqual(probe().chunks, upstreamChunks, 'chunk() sees every canonical chunk once, in order');

      // The client got the same chunks, then [DONE].
      assert.equal(rest.at(-1), '[DONE]');
      const clientChunks = [first, ...rest.slice(0, -1)].map((data) => JSON.parse(data) as ChatCompletionChunk);
      assert.deepEqual(clientChunks, upstreamChunks);

      const usage = { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 };
      assert.deepEqual(clientChunks.at(-1)!.usage, usage);
      assert.deepEqual(probe().outcomes, [{ status: 'completed', usage, chunks: 5 }]);
    } finally {
      clientGotFirst.resolve();
      fake.reset();
    }
  });

  test('a client that leaves mid-stream: complete() once with status aborted', async () => {
    const upstreamClosed = deferred();
    fake.handle((req, res) => {
      res.on('close', () => upstreamClosed.resolve());
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(helloStreamEvents(req.body)[0]);
      // ... and nothing more until the gateway hangs up.
    });
    const controller = new AbortController();
    try {
      const response = await within(streamRequest(controller.signal), 5000, 'no response within 5 s');
      assert.equal(response.status, 200);
      const sse = new SseReader(response.body!.getReader());
      const first = await within(sse.next(), 5000, 'the client did not receive the first chunk within 5 s');
      assert.ok(first !== null);
      assert.equal(probe().outcomes.length, 0, 'the stream is still open');

      controller.abort();
      await within(upstreamClosed.promise, 5000, 'the gateway did not hang up on the upstream within 5 s of the client leaving');
      await waitFor(() => probe().outcomes.length > 0, 5000, 'complete() was not called within 5 s of the client leaving');
      // A second call would come from the same finally block; give it room to show up anyway.
      await sleep(100);

      const outcomes = probe().outcomes;
      assert.equal(outcomes.length, 1, 'complete() exactly once');
      // No error field: a client that leaves is an abort, not a failure of the stream.
      assert.deepEqual(outcomes[0], { status: 'aborted', usage: null, chunks: 1 });
      assert.equal(probe().chunks.length, 1);
    } finally {
      controller.abort();
      fake.reset();
    }
  });
});

describe('plugin setup failures fail the boot', () => {
  // Both record what the gateway handed them, so the test can check the data folder and database were released.
  const RECORD = `
    probe().boot = {
      calledAt: performance.now(),
      dataDir: services.config.storage.dataDir,
      configDir: fileURLToPath(new URL('.', import.meta.url)),
      db: services.db,
    };`;
  const STUCK = pluginModule('stuck', `
  setup(config, services) {${RECORD}
    return new Promise(() => {});
  }`, "import { fileURLToPath } from 'node:url';");
  // Set up before a failing plugin: its onClose hook must still run, while the stores are open.
  const OPENER = pluginModule('opener', `
  setup(config, services) {
    services.onClose(async () => {
      const [row] = await services.db.query('SELECT 1 AS one');
      probe().ran.push('opener:onClose:db-open=' + (row?.one === 1));
    });
    return async (ctx, next) => next();
  }`);
  const BROKEN = pluginModule('broken', `
  setup(config, services) {${RECORD}
    throw new Error('broken: cannot reach the licence server');
  }`, "import { fileURLToPath } from 'node:url';");

  let fake: FakeOpenAI;
  const started: TestGateway[] = [];
  /** Folders startTestGateway made before the boot failed: it cannot remove them itself. */
  const leftovers: string[] = [];
  before(async () => {
    fake = await startFakeOpenAI();
  });
  after(async () => {
    for (const gw of started) await gw.close();
    for (const dir of leftovers) await rm(dir, { recursive: true, force: true });
    await fake?.close();
  });

  /** Starts a gateway that must fail; returns its error and how long after setup was called it failed. */
  async function bootFailure(yaml: string, files: Record<string, string>): Promise<{ error: Error; msAfterSetup: number }> {
    let error: unknown;
    try {
      started.push(await startTestGateway(yaml, { files }));
    } catch (err) {
      error = err;
    }
    const failedAt = performance.now();
    assert.ok(error instanceof Error, 'the gateway booted, but the plugin setup should have failed it');
    const boot = probe().boot;
    assert.ok(boot, 'the failing setup was never called');
    leftovers.push(boot.dataDir, boot.configDir);
    return { error, msAfterSetup: failedAt - boot.calledAt };
  }

  /** The data folder's lock is gone and the database is closed. */
  async function assertReleased(): Promise<void> {
    const boot = probe().boot!;
    await assert.rejects(access(join(boot.dataDir, 'aigw.lock')), { code: 'ENOENT' }, 'the data folder lock was not released');
    await assert.rejects(boot.db.query('SELECT 1'), 'the database is still open');
  }

  test('a setup that never resolves: rejected after pluginSetupTimeoutMs, naming the plugin', async () => {
    const yaml = config(fake.baseUrl, ['./stuck.mjs'], ['auth', 'stuck'], 'server: {pluginSetupTimeoutMs: 200}');
    const { error, msAfterSetup } = await bootFailure(yaml, { 'stuck.mjs': STUCK });
    assert.equal(error.message, 'plugin "stuck" (pipeline "chat") did not finish its setup within 200 ms');
    assert.ok(msAfterSetup >= 190 && msAfterSetup < 1500, `failed ${Math.round(msAfterSetup)} ms after setup was called`);
    await assertReleased();
  });

  test('a setup that throws: rejected with its error; the plugins set up before it are closed', async () => {
    const yaml = config(fake.baseUrl, ['./opener.mjs', './broken.mjs'], ['auth', 'opener', 'broken']);
    const { error } = await bootFailure(yaml, { 'opener.mjs': OPENER, 'broken.mjs': BROKEN });
    assert.equal(error.message, 'broken: cannot reach the licence server');
    assert.deepEqual(probe().ran, ['opener:onClose:db-open=true'], 'onClose hooks run on a failed boot, before the stores close');
    await assertReleased();
    assert.equal(fake.requests.length, 0);
  });
});
