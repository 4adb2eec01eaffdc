/**
 * Gateway ids are `<prefix>-<uuid>` (file-, batch-, resp-, ...). Anything else names nothing and is answered as
 * unknown without a query: a caller's id with a NUL in it would otherwise reach Postgres, which refuses it (a 500).
 */
import { randomFillSync } from 'node:crypto';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const shapes = new Map<string, RegExp>();

export function isGatewayId(prefix: string, id: string): boolean {
  let shape = shapes.get(prefix);
  if (!shape) shapes.set(prefix, (shape = new RegExp(`^${prefix}-${UUID}$`)));
  return shape.test(id);
}

/**
 * A UUID (version 7) whose text sorts in creation order within this process: 48 bits of wall time in ms, then a
 * 12-bit sequence that counts up within a millisecond, then 62 random bits. Lists are ordered by (created_at, id),
 * and the embedded database's clock has millisecond resolution: records created in the same millisecond are
 * ordered by their ids, which must then say which came first. The high-volume records (usage, audit) take them too:
 * their unique index then grows at its end instead of at random pages, which costs the database less per row.
 */
export function orderedUuid(now: number = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    sequence = 0;
  } else if (++sequence > 0xfff) {
    // 4,096 ids in one millisecond: borrow the next one, as RFC 9562 allows, so that order holds.
    lastMs++;
    sequence = 0;
  }
  if (lastMs !== prefixMs) {
    prefixMs = lastMs;
    const time = lastMs.toString(16).padStart(12, '0');
    prefix = `${time.slice(0, 8)}-${time.slice(8, 12)}-7`;
  }
  const at = takeRandom();
  // Written from lookup tables: number-to-string conversions and Buffer.toString cost about a µs per id, and the
  // usage and audit records take one per request.
  return prefix + HEX_DIGIT[sequence >> 8]! + HEX[sequence & 0xff]! + '-' + HEX[(pool[at]! & 0x3f) | 0x80]! + HEX[pool[at + 1]!]! + '-'
    + HEX[pool[at + 2]!]! + HEX[pool[at + 3]!]! + HEX[pool[at + 4]!]! + HEX[pool[at + 5]!]! + HEX[pool[at + 6]!]! + HEX[pool[at + 7]!]!;
}

const HEX_DIGIT = '0123456789abcdef';
/** Each byte value as two hex digits. */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
/** The id's first 15 characters (its time and version) for the millisecond they were made for. */
let prefixMs = -1;
let prefix = '';
let lastMs = 0;
let sequence = 0;

/** Random bytes drawn 8 at a time from one buffer filled 512 ids at a time, as randomUUID() pools its own. */
const pool = Buffer.alloc(8 * 512);
let poolAt = pool.length;

function takeRandom(): number {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += 8;
  return at;
}
