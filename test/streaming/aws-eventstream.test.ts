/**
 * The AWS event-stream framing: AWS's published codec vectors, every header type, both checksums, messages
 * split at every byte boundary or packed several to a read, and streams that end inside a message.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { crc32 } from 'node:zlib';
import type { StreamEvent } from '../../core/dispatch/provider.ts';
import { UpstreamTooLargeError } from '../../core/dispatch/upstream-errors.ts';
import { decodeAwsEventStream, encodeEventStreamMessage, EventStreamFramingError, MessageDecoder } from '../../core/streaming/aws-eventstream.ts';

const FOO_BAR = [123, 39, 102, 111, 111, 39, 58, 39, 98, 97, 114, 39, 125]; // {'foo':'bar'}

/** From AWS's event-stream codec test suite (aws-c-event-stream, as shipped in aws-sdk-js-v3's marshaller tests). */
const VECTORS = {
  empty_message: [0, 0, 0, 16, 0, 0, 0, 0, 5, 194, 72, 235, 125, 152, 200, 255],
  int32_header: [0, 0, 0, 43, 0, 0, 0, 14, 52, 139, 236, 123, 8, 101, 118, 101, 110, 116, 45, 105, 100, 4, 0, 0, 160, 12, ...FOO_BAR, 211, 137, 2, 133],
  payload_no_headers: [0, 0, 0, 29, 0, 0, 0, 0, 253, 82, 140, 90, ...FOO_BAR, 195, 101, 57, 54],
  payload_one_str_header: [0, 0, 0, 61, 0, 0, 0, 32, 7, 253, 131, 150, 12, 99, 111, 110, 116, 101, 110, 116, 45, 116, 121, 112, 101, 7, 0, 16, 97, 112, 112, 108, 105, 99, 97, 116, 105, 111, 110, 47, 106, 115, 111, 110, ...FOO_BAR, 141, 156, 8, 177],
  // 'content-type' with '+' for '-': the message checksum no longer matches.
  corrupted_headers: [0, 0, 0, 61, 0, 0, 0, 32, 7, 253, 131, 150, 12, 99, 111, 110, 116, 101, 110, 116, 43, 116, 121, 112, 101, 7, 0, 16, 97, 112, 112, 108, 105, 99, 97, 116, 105, 111, 110, 47, 106, 115, 111, 110, ...FOO_BAR, 141, 156, 8, 177],
  // Headers length and total length altered: the prelude checksum no longer matches.
  corrupted_header_len: [0, 0, 0, 61, 0, 0, 1, 32, 7, 253, 131, 150, 12, 99, 111, 110, 116, 101, 110, 116, 45, 116, 121, 112, 101, 7, 0, 16, 97, 112, 112, 108, 105, 99, 97, 116, 105, 111, 110, 47, 106, 115, 111, 110, ...FOO_BAR, 141, 156, 8, 177],
  corrupted_length: [1, 0, 0, 29, 0, 0, 0, 0, 253, 82, 140, 90, ...FOO_BAR, 195, 101, 57, 54],
  // The payload's last byte altered.
  corrupted_payload: [0, 0, 0, 29, 0, 0, 0, 0, 253, 82, 140, 90, 123, 39, 102, 111, 111, 39, 58, 39, 98, 97, 114, 39, 141, 195, 101, 57, 54],
};
const bytes = (name: keyof typeof VECTORS) => Uint8Array.from(VECTORS[name]);

/** A message with headers of any type, framed by hand (the gateway's encoder writes string headers only). */
function frame(headers: Array<[string, number, number[]]>, payload: Uint8Array): Uint8Array {
  const block = headers.flatMap(([name, type, value]) => [name.length, ...Buffer.from(name), type, ...value]);
  const total = 12 + block.length + payload.length + 4;
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  view.setUint32(0, total);
  view.setUint32(4, block.length);
  view.setUint32(8, crc32(out.subarray(0, 8)));
  out.set(block, 12);
  out.set(payload, 12 + block.length);
  view.setUint32(total - 4, crc32(out.subarray(0, total - 4)));
  return out;
}

const join = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => [...p]));

async function events(reads: Uint8Array[]): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const event of decodeAwsEventStream((async function* () { yield* reads; })())) out.push(event);
  return out;
}

const event = (type: string, data: string) => encodeEventStreamMessage({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, data);
const STREAM = join(
  event('messageStart', '{"role":"assistant"}'),
  event('contentBlockDelta', '{"contentBlockIndex":0,"delta":{"text":"héllo 👋 日本"},"p":"abcdefgh"}'),
  event('contentBlockStop', '{"contentBlockIndex":0}'),
  event('messageStop', '{"stopReason":"end_turn"}'),
  event('metadata', '{"usage":{"inputTokens":3,"outputTokens":2,"totalTokens":5}}'),
);
const EXPECTED: StreamEvent[] = [
  { event: 'messageStart', data: '{"role":"assistant"}' },
  { event: 'contentBlockDelta', data: '{"contentBlockIndex":0,"delta":{"text":"héllo 👋 日本"},"p":"abcdefgh"}' },
  { event: 'contentBlockStop', data: '{"contentBlockIndex":0}' },
  { event: 'messageStop', data: '{"stopReason":"end_turn"}' },
  { event: 'metadata', data: '{"usage":{"inputTokens":3,"outputTokens":2,"totalTokens":5}}' },
];

describe('AWS event-stream: the published codec vectors', () => {
  test('the valid messages decode to their headers and payload', () => {
    const decode = (name: keyof typeof VECTORS) => {
      const decoder = new MessageDecoder();
      const messages = decoder.push(bytes(name));
      decoder.end();
      assert.equal(messages.length, 1, name);
      return { headers: messages[0]!.headers, payload: [...messages[0]!.payload] };
    };
    assert.deepEqual(decode('empty_message'), { headers: {}, payload: [] });
    assert.deepEqual(decode('int32_header'), { headers: { 'event-id': 0x0000a00c }, payload: FOO_BAR });
    assert.deepEqual(decode('payload_no_headers'), { headers: {}, payload: FOO_BAR });
    assert.deepEqual(decode('payload_one_str_header'), { headers: { 'content-type': 'application/json' }, payload: FOO_BAR });
  });

  test('the encoder writes the string-header vector byte for byte', () => {
    assert.deepEqual([...encodeEventStreamMessage({ 'content-type': 'application/json' }, Uint8Array.from(FOO_BAR))], VECTORS.payload_one_str_header);
    assert.deepEqual([...encodeEventStreamMessage({}, '')], VECTORS.empty_message);
  });

  for (const [name, reason] of [
    ['corrupted_headers', /message checksum/],
    ['corrupted_payload', /message checksum/],
    ['corrupted_header_len', /prelude checksum/],
    ['corrupted_length', /prelude checksum/],
  ] as const) {
    test(`${name} is refused (${reason.source})`, () => {
      assert.throws(() => new MessageDecoder().push(bytes(name)), (err: unknown) => err instanceof EventStreamFramingError && reason.test(err.message));
    });
  }
});

describe('AWS event-stream: framing', () => {
  test('every header type decodes', () => {
    const uuid = Array.from({ length: 16 }, (_, i) => i * 17);
    const message = frame([
      ['yes', 0, []],
      ['no', 1, []],
      ['byte', 2, [0xfe]],
      ['short', 3, [0x80, 0x01]],
      ['int', 4, [0xff, 0xff, 0xff, 0xfe]],
      ['long', 5, [0, 0, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06]],
      ['bytes', 6, [0, 3, 1, 2, 3]],
      ['text', 7, [0, 5, ...Buffer.from('héll')]],
      ['time', 8, [0, 0, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00]],
      ['id', 9, uuid],
    ], Uint8Array.from(FOO_BAR));
    const [decoded] = new MessageDecoder().push(message);
    assert.deepEqual({ ...decoded!.headers, bytes: [...(decoded!.headers.bytes as Uint8Array)], id: [...(decoded!.headers.id as Uint8Array)] }, {
      yes: true,
      no: false,
      byte: -2,
      short: -32767,
      int: -2,
      long: 0x010203040506,
      bytes: [1, 2, 3],
      text: 'héll',
      time: 1_700_000_000_000,
      id: uuid,
    });
  });

  test('an unknown header type, and a header running past its block, are refused', () => {
    assert.throws(() => new MessageDecoder().push(frame([['odd', 10, []]], new Uint8Array(0))), /unknown type 10/);
    assert.throws(() => new MessageDecoder().push(frame([['cut', 7, [0, 9, 65]]], new Uint8Array(0))), /runs past its block/);
  });

  test('a length that cannot hold the message is refused; one past the frame limit is too large, before its bytes come', () => {
    const prelude = (total: number, headers: number) => {
      const out = new Uint8Array(16);
      const view = new DataView(out.buffer);
      view.setUint32(0, total);
      view.setUint32(4, headers);
      view.setUint32(8, crc32(out.subarray(0, 8)));
      return out;
    };
    assert.throws(() => new MessageDecoder().push(prelude(15, 0)), /length 15 is invalid/);
    assert.throws(() => new MessageDecoder().push(prelude(20, 8)), /length 20 is invalid/);
    assert.throws(() => new MessageDecoder().push(prelude(64 * 1024 * 1024, 0)), (err) => err instanceof UpstreamTooLargeError && err.limitBytes === 8 * 1024 * 1024);
    assert.throws(() => new MessageDecoder(4096).push(prelude(4097, 0)), (err) => err instanceof UpstreamTooLargeError && err.limitBytes === 4096);
  });

  test('several messages in one read', async () => {
    assert.deepEqual(await events([STREAM]), EXPECTED);
  });

  test('split at every byte boundary, and one byte per read', async () => {
    for (let cut = 1; cut < STREAM.length; cut++) {
      assert.deepEqual(await events([STREAM.subarray(0, cut), STREAM.subarray(cut)]), EXPECTED, `split at byte ${cut}`);
    }
    assert.deepEqual(await events(Array.from(STREAM, (_, i) => STREAM.subarray(i, i + 1))), EXPECTED);
  });

  test('a read may be reused by its producer once decoded', () => {
    // Sources such as a pooled socket buffer overwrite their bytes after the read; what was decoded stays.
    const first = event('contentBlockDelta', '{"delta":{"text":"kept"}}');
    const reused = new Uint8Array(first.length + 5);
    reused.set(first);
    const decoder = new MessageDecoder();
    decoder.push(reused.subarray(0, first.length - 3));
    reused.fill(0);
    reused.set(first.subarray(first.length - 3), 0);
    const [message] = decoder.push(reused.subarray(0, 3));
    assert.equal(new TextDecoder().decode(message!.payload), '{"delta":{"text":"kept"}}');
  });

  test('a stream that ends inside a message is an error, wherever it stops', async () => {
    for (const end of [3, 11, 12, 40, event('messageStart', '{}').length - 1]) {
      const cut = STREAM.subarray(0, end);
      await assert.rejects(events([cut]), (err: unknown) => err instanceof EventStreamFramingError && /ended inside a message/.test(err.message), `ending at byte ${end}`);
    }
  });

  test('exception and error messages become exception:<type> events', async () => {
    const exception = encodeEventStreamMessage({ ':message-type': 'exception', ':exception-type': 'throttlingException', ':content-type': 'application/json' }, '{"message":"slow down"}');
    const error = encodeEventStreamMessage({ ':message-type': 'error', ':error-code': 'InternalFailure', ':error-message': 'it broke' }, '');
    assert.deepEqual(await events([join(exception, error)]), [
      { event: 'exception:throttlingException', data: '{"message":"slow down"}' },
      { event: 'exception:InternalFailure', data: 'it broke' },
    ]);
  });
});
