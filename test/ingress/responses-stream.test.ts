/**
 * A stored Responses stream and the local cancel (liveResponses), as POST /v1/responses/:id/cancel uses it on the
 * instance that streams: the upstream is aborted at once, the partial output is handed back, the stream ends with
 * response.incomplete (status cancelled). And a caller that goes away leaves the response cancelled. On PGlite.
 */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import type { ChatCompletionChunk } from '../../core/canonical/chat.ts';
import type { LocalEndpointDeps } from '../../core/ingress/endpoint.ts';
import type { EventStreamBody } from '../../core/ingress/event-stream.ts';
import { liveResponses } from '../../core/ingress/responses-live.ts';
import { streamResponse } from '../../core/ingress/responses-stream.ts';
import type { ResponseTurn } from '../../core/ingress/responses-turn.ts';
import type { GatewayContext } from '../../core/pipeline/context.ts';
import { cancelResponse, findResponse, newResponseId } from '../../core/store/responses.ts';
import { openDatabase, type Database } from '../../core/store/database.ts';
import { migrate } from '../../core/store/migrate.ts';
import { freshDataDir } from '../helpers/data-dir.ts';
import { eventually } from '../helpers/eventually.ts';

let db: Database;
let dataDir: string;
before(async () => {
  dataDir = await freshDataDir();
  db = await openDatabase({ dataDir });
  await migrate(db);
});
after(async () => {
  await db.close();
  await rm(dataDir, { recursive: true, force: true });
});

const chunk = (content: string): ChatCompletionChunk => ({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] });

/**
 * An upstream that sends one delta, then waits until its request is aborted (and says so). Like an HTTP client, it
 * listens to the signal from the start, not only while its next chunk is being read.
 */
function hangingUpstream(signal: AbortSignal, aborted: () => void): AsyncIterable<ChatCompletionChunk> {
  const cut = new Promise<never>((_, reject) => signal.addEventListener('abort', () => {
    aborted();
    reject(signal.reason);
  }, { once: true }));
  cut.catch(() => {}); // read only if the stream is read that far
  return (async function* () {
    yield chunk('Partial');
    await cut;
  })();
}

function harness() {
  const controller = new AbortController();
  let upstreamAborted = false;
  const ctx = {
    status: 0, body: undefined as unknown, set() {},
    state: { gw: { signal: controller.signal, abort: (reason?: unknown) => controller.abort(reason), stream: hangingUpstream(controller.signal, () => (upstreamAborted = true)) } },
  };
  const deps = { db, clock: { now: Date.now } } as unknown as LocalEndpointDeps;
  const turn: ResponseTurn = {
    id: newResponseId(), body: { model: 'm', input: 'x', stream: true }, input: [{ role: 'user', content: 'x' }], provider: 'openai', store: true,
    caller: { tenantId: 'default', callerKind: 'api_key', apiKeyId: 'k', userId: null, organizationId: null, departmentId: null }, createdAt: Date.now(),
  };
  // What the server does when the caller's connection closes early: the request's signal aborts (pipelines.ts).
  const disconnect = () => controller.abort(new Error('caller gone'));
  return { ctx, deps, turn, upstreamAborted: () => upstreamAborted, disconnect };
}

async function* events(body: AsyncIterable<unknown>): AsyncGenerator<{ type: string; [field: string]: any }> {
  let buffer = '';
  for await (const piece of body) {
    buffer += String(piece);
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      yield JSON.parse(frame.split('\n').find((l) => l.startsWith('data: '))!.slice(6));
    }
  }
}

test('a local cancel: upstream aborted at once, partial output handed back and recorded, response.incomplete with status cancelled', async () => {
  const { ctx, deps, turn, upstreamAborted } = harness();
  await streamResponse(ctx as unknown as GatewayContext, deps, turn);
  assert.equal((await findResponse(db, 'default', turn.id))?.status, 'in_progress', 'recorded before the first event');
  const seen: string[] = [];
  let final: any;
  for await (const event of events((ctx.body as EventStreamBody).events)) {
    seen.push(event.type);
    if (event.type === 'response.output_text.delta') {
      // What the cancel endpoint does on this instance.
      const live = liveResponses(deps).get(turn.id)!;
      assert.equal(live.tenantId, 'default');
      const partial = live.cancel();
      assert.equal(upstreamAborted(), true);
      assert.equal((partial.output[0] as any).content[0].text, 'Partial');
      assert.equal((partial.output[0] as any).status, 'incomplete');
      await cancelResponse(db, 'default', turn.id, Date.now(), partial);
    }
    final = event;
  }
  assert.deepEqual(seen.slice(-4), ['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.incomplete']);
  assert.equal(final.response.status, 'cancelled');
  assert.equal(final.response.output[0].content[0].text, 'Partial');
  const record = await findResponse(db, 'default', turn.id);
  assert.equal(record?.status, 'cancelled');
  assert.equal((record?.output[0] as any).content[0].text, 'Partial');
  assert.equal(liveResponses(deps).has(turn.id), false, 'unregistered once over');
});

test('a caller that goes away mid-stream: upstream aborted, the response cancelled with its partial output', async () => {
  const { ctx, deps, turn, upstreamAborted, disconnect } = harness();
  await streamResponse(ctx as unknown as GatewayContext, deps, turn);
  const iterator = events((ctx.body as EventStreamBody).events)[Symbol.asyncIterator]();
  for (;;) {
    const { value } = await iterator.next();
    if (value?.type === 'response.output_text.delta') break;
  }
  disconnect();
  // What the server's writer does when the client's connection closes: it stops reading the events.
  await iterator.return(undefined);
  // The record is written by the stream's cleanup, which nothing outside it can await.
  await eventually(async () => assert.equal((await findResponse(db, 'default', turn.id))?.status, 'cancelled'));
  const record = await findResponse(db, 'default', turn.id);
  assert.equal(record?.status, 'cancelled');
  assert.equal((record?.output[0] as any).content[0].text, 'Partial');
  assert.equal(upstreamAborted(), true);
});
