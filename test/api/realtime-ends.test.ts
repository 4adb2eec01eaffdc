/**
 * Realtime sessions against a loopback OpenAI Realtime API, each on a gateway of its own: a gateway shutdown ends
 * every session on both sides and meters it; a metering report that fails at close is made again by the
 * realtime.meter job; a client that stops reading holds back the provider instead of filling the gateway's memory.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { MeteredWork } from '../../core/pipeline/metered.ts';
import { TALLY_FILES } from '../fakes/batches.ts';
import { realtimeConfig, RESPONSE_AUDIO_BYTES, startFakeRealtime } from '../fakes/realtime.ts';
import { eventually } from '../helpers/eventually.ts';
import { startTestGateway } from '../helpers/gateway.ts';
import { connectRealtime, converse, createSession, CLIENT_AUDIO } from '../helpers/realtime-client.ts';

describe('realtime sessions at gateway shutdown', () => {
  test('SIGTERM (gateway close) ends every session with 1001 on both sides and meters its usage', async () => {
    const fake = await startFakeRealtime();
    const gw = await startTestGateway(realtimeConfig(fake.origin), { files: TALLY_FILES });
    try {
      const key = await gw.createKey({ scopes: { capabilities: ['realtime'] } });
      const created = await createSession(gw.url, key);
      const client = await connectRealtime(created.body.gateway_ws_url, created.body.subprotocol_hint);
      await client.frameCount(2);
      client.socket.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: CLIENT_AUDIO }));
      client.socket.send(JSON.stringify({ type: 'response.create' }));
      await client.frameCount(6);
      const tally = gw.gateway.pluginState('tally') as { seen: MeteredWork[] };
      await gw.gateway.close();
      assert.equal((await client.closed).code, 1001);
      assert.equal(fake.connections[0]!.closed?.code, 1001);
      const work = tally.seen.filter((w) => w.id === created.body.id);
      assert.equal(work.length, 1);
      assert.deepEqual(work[0]!.usage, { prompt_tokens: 12, completion_tokens: 34, total_tokens: 46 });
      assert.equal(work[0]!.audioSeconds, 1 + RESPONSE_AUDIO_BYTES / 48_000);
    } finally {
      await gw.close();
      await fake.close();
    }
  });
});

/** A plugin whose store fails the first report of each work: the session's usage must be reported again. */
const FLAKY_FILES = {
  'flaky.mjs': TALLY_FILES['tally.mjs'].replace("name: 'tally'", "name: 'flaky'").replace(
    'async onMeteredWork(work, services, shared) { shared.seen.push(work); }',
    'async onMeteredWork(work, services, shared) { shared.seen.push(work); if (shared.seen.length === 1) throw new Error("store down"); }'),
};

describe('realtime metering that fails at close', () => {
  test('is reported again by the realtime.meter job until the plugins take it', async () => {
    const fake = await startFakeRealtime();
    const gw = await startTestGateway(realtimeConfig(fake.origin).replace('plugins: [./tally.mjs]', 'plugins: [./flaky.mjs]'), { files: FLAKY_FILES });
    try {
      const key = await gw.createKey({ scopes: { capabilities: ['realtime'] } });
      const created = await createSession(gw.url, key);
      const client = await connectRealtime(created.body.gateway_ws_url, created.body.subprotocol_hint);
      await client.frameCount(2);
      await converse(client);
      client.socket.close();
      const flaky = gw.gateway.pluginState('flaky') as { seen: MeteredWork[] };
      await eventually(async () => assert.equal(flaky.seen.length, 2), 10_000, 50);
      assert.deepEqual(flaky.seen.map((w) => w.id), [created.body.id, created.body.id]);
      assert.deepEqual(flaky.seen[1]!.usage, { prompt_tokens: 12, completion_tokens: 34, total_tokens: 46 });
      assert.equal(flaky.seen[1]!.audioSeconds, 1 + RESPONSE_AUDIO_BYTES / 48_000);
    } finally {
      await gw.close();
      await fake.close();
    }
  });
});

describe('realtime back-pressure', () => {
  test('a client that does not read makes the gateway stop reading the provider; nothing is lost once it reads again', async () => {
    const fake = await startFakeRealtime();
    const gw = await startTestGateway(realtimeConfig(fake.origin, 'realtime:\n  maxBufferedBytes: 65536\n'), { files: TALLY_FILES });
    try {
      const key = await gw.createKey({ scopes: { capabilities: ['realtime'] } });
      const created = await createSession(gw.url, key);
      const client = await connectRealtime(created.body.gateway_ws_url, created.body.subprotocol_hint);
      await client.frameCount(2);
      const COUNT = 600;
      const BYTES = 64 * 1024;
      client.socket.pause();
      client.socket.send(JSON.stringify({ type: 'test.flood', count: COUNT, bytes: BYTES }));
      // About 39 MB go out; were the gateway reading on, they would pile up in its memory, waiting for the client.
      let most = 0;
      const sampler = setInterval(() => (most = Math.max(most, gw.gateway.realtime.buffered().client)), 2);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      clearInterval(sampler);
      assert.ok(most > 0, 'frames were relayed');
      assert.ok(most <= 1024 * 1024, `at most ${most} bytes waited for the client`);
      client.socket.resume();
      await eventually(async () => assert.equal(client.frames.length, 2 + COUNT), 30_000, 50);
      const ids = client.frames.slice(2).map((frame) => (JSON.parse(frame) as { event_id: string }).event_id);
      assert.deepEqual(ids, Array.from({ length: COUNT }, (_, i) => `ev_f${i}`), 'every frame, in order');
      client.socket.close();
      await client.closed;
    } finally {
      await gw.close();
      await fake.close();
    }
  });
});

describe('realtime slot lease', () => {
  test('a connected session keeps its slot past the lease, renewed while it lives; its close frees it', async () => {
    const fake = await startFakeRealtime();
    const gw = await startTestGateway(realtimeConfig(fake.origin, 'realtime:\n  maxConcurrentSessions: 1\n  slotLeaseMs: 5000\n'), { files: TALLY_FILES });
    try {
      const key = await gw.createKey({ scopes: { capabilities: ['realtime'] } });
      const created = await createSession(gw.url, key);
      const client = await connectRealtime(created.body.gateway_ws_url, created.body.subprotocol_hint);
      await client.frameCount(2);
      await new Promise((resolve) => setTimeout(resolve, 6000));
      assert.equal((await createSession(gw.url, key)).status, 429, 'the slot outlived its first lease');
      client.socket.close();
      await client.closed;
      await eventually(async () => assert.equal((await createSession(gw.url, key)).status, 200));
    } finally {
      await gw.close();
      await fake.close();
    }
  });
});
