/**
 * settleOnce: charges a cost already spent (work metered outside a request, a batch) to budget counters,
 * exactly once per settlement marker, in one atomic step. It sets the marker (NX, with its TTL) and adds each
 * amount to its counter; when the marker exists, nothing happens, so the same work reported twice, or by two
 * instances at once, is charged once. No ceiling: the money is spent. A counter that does not exist is left
 * alone, not created: it is rebuilt from the usage records when next needed (ledger.ts), and they already hold
 * this work, since the usage plugin takes it first (settle.ts).
 */
import { defineKvOperation, type MemoryKvAccess } from '../../core/store/kv-operation.ts';

export interface SettleOnceArgs {
  marker: string;
  markerTtlMs: number;
  adds: ReadonlyArray<{ key: string; amount: number }>;
}

export type SettleOnceOutcome =
  /** The marker was set now; `charged` the indexes of the counters that existed and were added to. */
  | { status: 'settled'; charged: number[] }
  /** The marker was there: settled before, nothing added. */
  | { status: 'already' };

const INTEGER = /^-?\d+$/;

/**
 * KEYS: the marker, then the counters; ARGV: the marker's TTL (ms), then the amounts. Returns {0} when the marker
 * existed, else {1, index...} (0-based) of the counters added to. Values are checked before anything is written:
 * Redis does not roll back what a script wrote before it failed.
 */
const SETTLE_ONCE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return {0} end
local present = {}
for i = 2, #KEYS do
  local v = redis.call('GET', KEYS[i])
  if v then
    if not string.match(v, '^%-?%d+$') then return redis.error_reply('value at ' .. KEYS[i] .. ' is not an integer') end
    present[#present + 1] = i
  end
end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
local result = {1}
for _, i in ipairs(present) do
  redis.call('INCRBY', KEYS[i], ARGV[i])
  result[#result + 1] = i - 2
end
return result`;

function settleInMemory(kv: MemoryKvAccess, { marker, markerTtlMs, adds }: SettleOnceArgs): SettleOnceOutcome {
  if (kv.get(marker) !== null) return { status: 'already' };
  const present = adds.flatMap(({ key }, i) => {
    const text = kv.get(key);
    if (text === null) return [];
    if (!INTEGER.test(text)) throw new Error(`value at ${key} is not an integer`);
    return [i];
  });
  kv.set(marker, '1', markerTtlMs);
  for (const i of present) {
    const { key, amount } = adds[i]!;
    kv.set(key, String(Number(kv.get(key)) + amount));
  }
  return { status: 'settled', charged: present };
}

export const settleOnce = defineKvOperation<SettleOnceArgs, SettleOnceOutcome>({
  name: 'budget.settleOnce',
  redis: {
    lua: SETTLE_ONCE,
    keys: ({ marker, adds }) => [marker, ...adds.map((a) => a.key)],
    argv: ({ markerTtlMs, adds }) => [markerTtlMs, ...adds.map((a) => a.amount)],
    parse: (raw) => {
      const reply = (raw as Array<number | string>).map(Number);
      return reply[0] === 1 ? { status: 'settled', charged: reply.slice(1) } : { status: 'already' };
    },
  },
  memory: settleInMemory,
});
