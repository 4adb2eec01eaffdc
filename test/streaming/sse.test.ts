import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { decodeSse, encodeSse, EventDecoder, LineDecoder, type SseEvent } from '../../core/streaming/sse.ts';

const utf8 = new TextEncoder();

async function* source(chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const chunk of chunks) yield chunk;
}

async function decode(chunks: Uint8Array[]): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of decodeSse(source(chunks))) events.push(event);
  return events;
}

const decodeText = (text: string): Promise<SseEvent[]> => decode([utf8.encode(text)]);

/** Every byte on its own read. */
const oneByteChunks = (bytes: Uint8Array): Uint8Array[] => Array.from(bytes, (_, i) => bytes.subarray(i, i + 1));

// A realistic OpenAI chat-completions stream.
const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): string =>
  JSON.stringify({
    id: 'chatcmpl-9xYz',
    object: 'chat.completion.chunk',
    created: 1718000000,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
const ROLE = chunk({ role: 'assistant', content: '' });
const HELLO = chunk({ content: 'héllo 👋' });
const MORE = chunk({ content: ' — ça va? 日本語 ✓' });
const STOP = chunk({}, 'stop');
const USAGE = JSON.stringify({ usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 } });

/** Lines of the sample; joined with LF, CRLF or CR. The stream ends with the blank line after [DONE]. */
const SAMPLE_LINES = [
  ': keep-alive',
  '',
  `data: ${ROLE}`,
  '',
  `data: ${HELLO}`,
  '',
  ': keep-alive',
  `data: ${MORE}`,
  '',
  'event: usage',
  `data: ${USAGE}`,
  '',
  'id: evt-42',
  `data: ${STOP}`,
  '',
  'data: first line',
  'data: second line',
  'data:',
  ': a comment between data lines',
  'data: fourth line',
  '',
  'data: [DONE]',
  '',
  '',
];

// The id persists as the last event id (WHATWG), so every event after `id:` carries it.
const SAMPLE_EVENTS: SseEvent[] = [
  { event: 'message', data: ROLE },
  { event: 'message', data: HELLO },
  { event: 'message', data: MORE },
  { event: 'usage', data: USAGE },
  { event: 'message', data: STOP, id: 'evt-42' },
  { event: 'message', data: 'first line\nsecond line\n\nfourth line', id: 'evt-42' },
  { event: 'message', data: '[DONE]', id: 'evt-42' },
];

const VARIANTS: Array<[string, Uint8Array]> = [
  ['LF', utf8.encode(SAMPLE_LINES.join('\n'))],
  ['CRLF', utf8.encode(SAMPLE_LINES.join('\r\n'))],
  ['CR', utf8.encode(SAMPLE_LINES.join('\r'))],
  ['LF with a leading BOM', utf8.encode('\uFEFF' + SAMPLE_LINES.join('\n'))],
];

describe('decodeSse: the sample OpenAI stream', () => {
  test('decodes to the expected events in one read', async () => {
    const events = await decode([VARIANTS[0]![1]]);
    assert.deepEqual(events, SAMPLE_EVENTS);
    const hello = JSON.parse(events[1]!.data) as { choices: Array<{ delta: { content: string } }> };
    assert.equal(hello.choices[0]!.delta.content, 'héllo 👋');
  });

  for (const [name, bytes] of VARIANTS) {
    describe(`${name} line endings`, () => {
      test('unsplit buffer', async () => {
        assert.deepEqual(await decode([bytes]), SAMPLE_EVENTS);
      });

      test('two reads, split at every byte boundary', async () => {
        for (let i = 0; i <= bytes.length; i++) {
          const events = await decode([bytes.subarray(0, i), bytes.subarray(i)]);
          assert.deepEqual(events, SAMPLE_EVENTS, `split at byte ${i}`);
        }
      });

      test('three reads, split at every pair of boundaries (with a stride when that is too slow)', async () => {
        const n = bytes.length;
        // All pairs cost ~n^2/2 decodes. Past a budget, j steps by a stride whose offset turns with i, so that
        // every first split point is still paired with second split points of every residue.
        const budget = 20_000;
        const stride = Math.max(1, Math.ceil((n * n) / 2 / budget));
        const expected = JSON.stringify(SAMPLE_EVENTS);
        let decodes = 0;
        for (let i = 0; i <= n; i++) {
          for (let j = i + (i % stride); j <= n; j += stride) {
            const events = await decode([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)]);
            decodes++;
            // deepEqual only on a mismatch: comparing the JSON is much faster and just as strict here.
            if (JSON.stringify(events) !== expected) assert.deepEqual(events, SAMPLE_EVENTS, `split at bytes ${i} and ${j}`);
          }
        }
        assert.ok(decodes >= Math.min(budget, ((n + 1) * (n + 2)) / 2) / 2, `only ${decodes} decodes`);
      });

      test('one-byte reads', async () => {
        assert.deepEqual(await decode(oneByteChunks(bytes)), SAMPLE_EVENTS);
      });
    });
  }

  test('the CRLF sample has splits right between CR and LF, and the split-at-every-byte test covers them', async () => {
    const bytes = VARIANTS[1]![1];
    const between: number[] = [];
    for (let i = 1; i < bytes.length; i++) if (bytes[i - 1] === 13 && bytes[i] === 10) between.push(i);
    assert.ok(between.length >= SAMPLE_LINES.length - 1);
    for (const i of between) {
      assert.deepEqual(await decode([bytes.subarray(0, i), bytes.subarray(i)]), SAMPLE_EVENTS, `split at byte ${i}`);
    }
  });

  test('the multi-byte sample has splits inside a UTF-8 character', () => {
    const bytes = VARIANTS[0]![1];
    // Continuation bytes are 10xxxxxx: a split before one cuts a character in two.
    const inside = bytes.filter((b) => (b & 0xc0) === 0x80).length;
    assert.ok(inside >= 10, `expected many continuation bytes, got ${inside}`);
  });
});

describe('decodeSse: line endings', () => {
  test('CR then LF in separate reads is one line end, not two', async () => {
    const events = await decode([utf8.encode('data: a\r'), utf8.encode('\ndata: b\r'), utf8.encode('\n\r'), utf8.encode('\n')]);
    assert.deepEqual(events, [{ event: 'message', data: 'a\nb' }]);
  });

  test('an empty read between the CR and the LF of a CRLF', async () => {
    const events = await decode([utf8.encode('data: a\r'), new Uint8Array(0), utf8.encode('\ndata: b\r\n\r\n')]);
    assert.deepEqual(events, [{ event: 'message', data: 'a\nb' }]);
  });

  test('a CR at the end of a read followed by a CR is a blank line', async () => {
    const events = await decode([utf8.encode('data: a\r'), utf8.encode('\rdata: b\r\r')]);
    assert.deepEqual(events, [{ event: 'message', data: 'a' }, { event: 'message', data: 'b' }]);
  });

  test('a CR at the end of a read followed by the first bytes of a multi-byte character', async () => {
    const bytes = utf8.encode('data: a\r\ndata: é\r\n\r\n');
    const cr = bytes.indexOf(13);
    // [..CR] [LF] ['data: ', first byte of é] [rest]
    const e = bytes.indexOf(0xc3);
    const events = await decode([bytes.subarray(0, cr + 1), bytes.subarray(cr + 1, cr + 2), bytes.subarray(cr + 2, e + 1), bytes.subarray(e + 1)]);
    assert.deepEqual(events, [{ event: 'message', data: 'a\né' }]);
  });

  test('mixed LF, CRLF and CR in one stream', async () => {
    assert.deepEqual(await decodeText('data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\r'), [
      { event: 'message', data: 'a\nb\nc' },
      { event: 'message', data: 'd' },
    ]);
  });

  test('LineDecoder keeps the partial line between reads and flushes it at the end', () => {
    const lines = new LineDecoder();
    assert.deepEqual(lines.push(utf8.encode('abc')), []);
    assert.deepEqual(lines.push(utf8.encode('def\r')), ['abcdef']);
    assert.deepEqual(lines.push(utf8.encode('\nxyz')), []);
    assert.deepEqual(lines.end(), ['xyz']);
  });

  test('LineDecoder holds a character split across reads', () => {
    const bytes = utf8.encode('👋\n');
    const lines = new LineDecoder();
    assert.deepEqual(lines.push(bytes.subarray(0, 2)), []);
    assert.deepEqual(lines.push(bytes.subarray(2, 3)), []);
    assert.deepEqual(lines.push(bytes.subarray(3)), ['👋']);
    assert.deepEqual(lines.end(), []);
  });
});

describe('decodeSse: the event-stream rules', () => {
  test('a leading UTF-8 BOM is dropped', async () => {
    assert.deepEqual(await decodeText('\uFEFFdata: x\n\n'), [{ event: 'message', data: 'x' }]);
  });

  test('a leading BOM split byte by byte is dropped', async () => {
    assert.deepEqual(await decode(oneByteChunks(utf8.encode('\uFEFFdata: x\n\n'))), [{ event: 'message', data: 'x' }]);
  });

  test('only the leading BOM is dropped: one later in the stream is part of the text', async () => {
    // `\uFEFFdata` is then an unknown field name, so that line is ignored.
    assert.deepEqual(await decodeText('data: a\n\n\uFEFFdata: b\n\ndata: \uFEFFc\n\n'), [
      { event: 'message', data: 'a' },
      { event: 'message', data: '\uFEFFc' },
    ]);
  });

  test('a last event without its trailing blank line is still delivered at end of input', async () => {
    assert.deepEqual(await decodeText('data: a\n\ndata: b'), [{ event: 'message', data: 'a' }, { event: 'message', data: 'b' }]);
    assert.deepEqual(await decodeText('data: a\n\ndata: b\n'), [{ event: 'message', data: 'a' }, { event: 'message', data: 'b' }]);
    assert.deepEqual(await decodeText('event: done\ndata: b\r'), [{ event: 'done', data: 'b' }]);
    assert.deepEqual(await decode(oneByteChunks(utf8.encode('data: x\ndata: y'))), [{ event: 'message', data: 'x\ny' }]);
  });

  test('an empty stream and a stream of comments and blank lines yield nothing', async () => {
    assert.deepEqual(await decode([]), []);
    assert.deepEqual(await decodeText(''), []);
    assert.deepEqual(await decodeText(': keep-alive\n\n:\n\n\n\n: ping'), []);
  });

  test('retry: takes ASCII digits only', async () => {
    assert.deepEqual(await decodeText('retry: 3000\ndata: a\n\n'), [{ event: 'message', data: 'a', retry: 3000 }]);
    assert.deepEqual(await decodeText('retry:0\ndata: a\n\n'), [{ event: 'message', data: 'a', retry: 0 }]);
    for (const bad of ['10a', '-5', '1.5', '', ' 100', '1e3', '٣']) {
      assert.deepEqual(await decodeText(`retry: ${bad}\ndata: a\n\n`), [{ event: 'message', data: 'a' }], `retry: ${bad}`);
    }
    // An invalid retry leaves the previous one in place.
    assert.deepEqual(await decodeText('retry: 10\ndata: a\n\nretry: x\ndata: b\n\n'), [
      { event: 'message', data: 'a', retry: 10 },
      { event: 'message', data: 'b', retry: 10 },
    ]);
  });

  test('a field with no colon has the empty string as its value', async () => {
    assert.deepEqual(await decodeText('data\n\n'), [{ event: 'message', data: '' }]);
    assert.deepEqual(await decodeText('data\ndata\ndata: x\n\n'), [{ event: 'message', data: '\n\nx' }]);
    // `event` alone resets the type to the default.
    assert.deepEqual(await decodeText('event\ndata: x\n\n'), [{ event: 'message', data: 'x' }]);
    // An unknown field name with or without a colon is ignored.
    assert.deepEqual(await decodeText('foo\nbar: baz\ndata: x\n\n'), [{ event: 'message', data: 'x' }]);
  });

  test('data: with no space, and only one leading space is stripped', async () => {
    assert.deepEqual(await decodeText('data:x\n\n'), [{ event: 'message', data: 'x' }]);
    assert.deepEqual(await decodeText('data:  x \n\n'), [{ event: 'message', data: ' x ' }]);
    assert.deepEqual(await decodeText('data:\tx\n\n'), [{ event: 'message', data: '\tx' }]);
    assert.deepEqual(await decodeText('event:usage\ndata:{"a":1}\n\n'), [{ event: 'usage', data: '{"a":1}' }]);
    // Only the first colon separates: the value keeps the rest.
    assert.deepEqual(await decodeText('data: a: b:c\n\n'), [{ event: 'message', data: 'a: b:c' }]);
  });

  test('comments are ignored, wherever they appear', async () => {
    assert.deepEqual(await decodeText(':\n: hello\ndata: a\n:data: not data\ndata: b\n: bye\n\n'), [{ event: 'message', data: 'a\nb' }]);
  });

  test('empty data: lines', async () => {
    assert.deepEqual(await decodeText('data:\n\n'), [{ event: 'message', data: '' }]);
    assert.deepEqual(await decodeText('data: \n\n'), [{ event: 'message', data: '' }]);
    assert.deepEqual(await decodeText('data:\ndata:\n\n'), [{ event: 'message', data: '\n' }]);
    assert.deepEqual(await decodeText('data: a\ndata:\n\n'), [{ event: 'message', data: 'a\n' }]);
  });

  test('several blank lines between events do not produce empty events', async () => {
    assert.deepEqual(await decodeText('data: a\n\n\n\n\ndata: b\n\n'), [{ event: 'message', data: 'a' }, { event: 'message', data: 'b' }]);
  });

  test('the event type resets after each event; the id persists', async () => {
    assert.deepEqual(await decodeText('event: a\nid: 1\ndata: x\n\ndata: y\n\nid: 2\ndata: z\n\n'), [
      { event: 'a', data: 'x', id: '1' },
      { event: 'message', data: 'y', id: '1' },
      { event: 'message', data: 'z', id: '2' },
    ]);
  });

  test('an id containing NUL is ignored', async () => {
    assert.deepEqual(await decodeText('id: a\0b\ndata: x\n\n'), [{ event: 'message', data: 'x' }]);
  });

  test('EventDecoder on its own: lines in, events out', () => {
    const events = new EventDecoder();
    assert.equal(events.line('event: usage'), null);
    assert.equal(events.line('data: 1'), null);
    assert.equal(events.line('data: 2'), null);
    assert.deepEqual(events.line(''), { event: 'usage', data: '1\n2' });
    assert.equal(events.line(''), null);
    assert.equal(events.line('data: tail'), null);
    assert.deepEqual(events.end(), { event: 'message', data: 'tail' });
    assert.equal(events.end(), null);
  });
});

describe('encodeSse', () => {
  test('a single line', async () => {
    assert.equal(encodeSse('hello'), 'data: hello\n\n');
    assert.deepEqual(await decodeText(encodeSse('hello')), [{ event: 'message', data: 'hello' }]);
  });

  test('a JSON chunk round-trips, including multi-byte characters', async () => {
    assert.deepEqual(await decodeText(encodeSse(HELLO)), [{ event: 'message', data: HELLO }]);
    assert.deepEqual(await decode(oneByteChunks(utf8.encode(encodeSse(HELLO)))), [{ event: 'message', data: HELLO }]);
  });

  test('a multi-line string becomes one data: line per line and round-trips', async () => {
    const text = 'first\nsecond\n\nfourth\n';
    assert.equal(encodeSse(text), 'data: first\ndata: second\ndata: \ndata: fourth\ndata: \n\n');
    assert.deepEqual(await decodeText(encodeSse(text)), [{ event: 'message', data: text }]);
  });

  test('a named event', async () => {
    assert.equal(encodeSse('{"a":1}', 'usage'), 'event: usage\ndata: {"a":1}\n\n');
    assert.deepEqual(await decodeText(encodeSse('a\nb', 'usage')), [{ event: 'usage', data: 'a\nb' }]);
  });

  test('the empty string and strings with leading spaces or colons round-trip', async () => {
    for (const data of ['', ' leading space', ':colon first', 'data: nested', '[DONE]']) {
      assert.deepEqual(await decodeText(encodeSse(data)), [{ event: 'message', data }], JSON.stringify(data));
    }
  });

  test('several encoded events concatenated decode in order', async () => {
    const wire = [encodeSse(ROLE), encodeSse(HELLO), encodeSse('x\ny', 'usage'), encodeSse('[DONE]')].join('');
    assert.deepEqual(await decode(oneByteChunks(utf8.encode(wire))), [
      { event: 'message', data: ROLE },
      { event: 'message', data: HELLO },
      { event: 'usage', data: 'x\ny' },
      { event: 'message', data: '[DONE]' },
    ]);
  });
});
