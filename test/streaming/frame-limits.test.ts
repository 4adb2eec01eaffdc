/**
 * The frame limit of the stream decoders (upstream.maxFrameBytes): a line that never ends, an SSE event that
 * never gets its blank line, and a JSON line past the limit throw UpstreamTooLargeError as soon as the limit is
 * crossed, holding no more than the limit; frames up to the limit pass, however the bytes are split.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { UpstreamTooLargeError } from '../../core/dispatch/upstream-errors.ts';
import { decodeStream } from '../../core/streaming/decode.ts';
import { EventDecoder, LineDecoder } from '../../core/streaming/sse.ts';

const LIMIT = 4096;
const tooLarge = (err: unknown) => err instanceof UpstreamTooLargeError && err.limitBytes === LIMIT && err.what === 'stream frame';
const bytes = (text: string) => new TextEncoder().encode(text);

/** An endless source that counts what was pulled from it: a decoder that stops pulling holds the rest back. */
function endless(prefix: string, piece: string) {
  const counter = { pulled: 0 };
  const source = (async function* () {
    yield bytes(prefix);
    counter.pulled += prefix.length;
    for (;;) {
      yield bytes(piece);
      counter.pulled += piece.length;
    }
  })();
  return { source, counter };
}

async function drain(events: AsyncIterable<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const event of events) out.push(event);
  return out;
}

describe('stream frame limit', () => {
  test('SSE: a data line that never ends stops the decoder just past the limit', async () => {
    const { source, counter } = endless('data: {"a":"', 'x'.repeat(1000));
    await assert.rejects(drain(decodeStream('sse', source, LIMIT)), tooLarge);
    assert.ok(counter.pulled <= LIMIT + 1000, `pulled ${counter.pulled} bytes`);
  });

  test('SSE: data lines that never get their blank line are one event, limited as one', async () => {
    const { source, counter } = endless('', 'data: 0123456789\n');
    await assert.rejects(drain(decodeStream('sse', source, LIMIT)), tooLarge);
    assert.ok(counter.pulled <= LIMIT * 2, `pulled ${counter.pulled} bytes`);
  });

  test('NDJSON and the line layer: a line longer than the limit is refused before it is complete', async () => {
    const { source, counter } = endless('{"text":"', 'é'.repeat(300));
    await assert.rejects(drain(decodeStream('ndjson', source, LIMIT)), tooLarge);
    assert.ok(counter.pulled <= LIMIT + 600);
    const lines = new LineDecoder(LIMIT);
    assert.throws(() => lines.push(bytes('y'.repeat(LIMIT + 1))), tooLarge);
  });

  test('frames up to the limit pass, split anywhere, with CRLF and multi-byte characters across reads', async () => {
    const value = 'ü'.repeat(Math.floor((LIMIT - 20) / 2));
    const wire = bytes(`data: {"v":"${value}"}\r\n\r\ndata: [DONE]\r\n\r\n`);
    for (const size of [1, 3, 7, 64, 1000]) {
      const source = (async function* () {
        for (let at = 0; at < wire.length; at += size) yield wire.slice(at, at + size);
      })();
      const events = (await drain(decodeStream('sse', source, LIMIT))) as Array<{ data: string }>;
      assert.equal(events.length, 2, `pieces of ${size}`);
      assert.equal((JSON.parse(events[0]!.data) as { v: string }).v, value);
    }
  });

  test('many short lines and events stay under the limit: only one frame counts', async () => {
    const lines = new LineDecoder(LIMIT);
    const events = new EventDecoder(LIMIT);
    let seen = 0;
    for (let i = 0; i < 2000; i++) {
      for (const line of lines.push(bytes(`data: event number ${i}\n\n`))) if (events.line(line)) seen++;
    }
    assert.equal(seen, 2000);
  });
});
