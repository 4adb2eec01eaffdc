import assert from 'node:assert/strict';
import { test } from 'node:test';
import { partsOf } from '../../core/dispatch/files-call.ts';

async function* chunks(...sizes: number[]): AsyncGenerator<Buffer> {
  let next = 0;
  for (const size of sizes) {
    yield Buffer.from(Array.from({ length: size }, () => next++ % 256));
  }
}

async function cut(size: number, ...sizes: number[]) {
  const parts: Array<{ bytes: number; last: boolean; first: number | undefined }> = [];
  for await (const part of partsOf(chunks(...sizes), size)) parts.push({ bytes: part.bytes.length, last: part.last, first: part.bytes[0] });
  return parts;
}

test('partsOf cuts a stream into parts of the size, whatever the chunks, and marks only the last', async () => {
  assert.deepEqual(await cut(4, 3, 3, 3), [{ bytes: 4, last: false, first: 0 }, { bytes: 4, last: false, first: 4 }, { bytes: 1, last: true, first: 8 }]);
  assert.deepEqual(await cut(4, 10), [{ bytes: 4, last: false, first: 0 }, { bytes: 4, last: false, first: 4 }, { bytes: 2, last: true, first: 8 }]);
  assert.deepEqual(await cut(4, 1, 1, 1, 1), [{ bytes: 4, last: true, first: 0 }]);
});

test('a stream of a whole number of parts ends with a full last part, not an empty one', async () => {
  assert.deepEqual(await cut(4, 8), [{ bytes: 4, last: false, first: 0 }, { bytes: 4, last: true, first: 4 }]);
  assert.deepEqual(await cut(4, 4, 4), [{ bytes: 4, last: false, first: 0 }, { bytes: 4, last: true, first: 4 }]);
});

test('an empty stream is one empty last part', async () => {
  assert.deepEqual(await cut(4), [{ bytes: 0, last: true, first: undefined }]);
  assert.deepEqual(await cut(4, 0, 0), [{ bytes: 0, last: true, first: undefined }]);
});

test('a part is handed on before the rest of the stream is read (back-pressure reaches the source)', async () => {
  let read = 0;
  async function* source(): AsyncGenerator<Buffer> {
    for (let i = 0; i < 100; i++) {
      read++;
      yield Buffer.alloc(4);
    }
  }
  const parts = partsOf(source(), 4);
  await parts.next();
  // The first part waited for one more chunk (to know it was not the last), no more.
  assert.equal(read, 2);
  await parts.return(undefined);
});
