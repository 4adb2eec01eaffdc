/** Gateway ids (core/store/ids.ts): their shape, and the creation order their text keeps. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isGatewayId, orderedUuid } from '../../core/store/ids.ts';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('orderedUuid', () => {
  test('is a version 7 UUID that a gateway id accepts', () => {
    const uuid = orderedUuid();
    assert.match(uuid, V7);
    assert.ok(isGatewayId('file', `file-${uuid}`));
  });

  test('sorts in creation order within one millisecond, past 4,096 ids, and when the clock steps back', () => {
    const now = Date.now() + 60_000; // ahead of every id made so far
    const made = [
      ...Array.from({ length: 5000 }, () => orderedUuid(now)),
      ...Array.from({ length: 10 }, () => orderedUuid(now - 5)),
      orderedUuid(now + 10),
    ];
    assert.deepEqual([...made].sort(), made);
    assert.equal(new Set(made).size, made.length);
    for (const uuid of made) assert.match(uuid, V7);
  });

  test('carries the wall time in its first 48 bits', () => {
    const now = Date.now() + 120_000;
    assert.equal(parseInt(orderedUuid(now).replace(/-/g, '').slice(0, 12), 16), now);
  });
});
