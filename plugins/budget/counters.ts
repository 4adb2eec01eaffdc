/**
 * The budget counters' KV operation: adds each integer `amount` to its counter, all or nothing, atomically.
 * Nothing is added when a counter is missing (counters are created by setIfAbsent, with their TTL) or when an
 * amount >= 0 would take its counter above its `ceiling`: then the first refusing counter is reported. A negative
 * amount is never refused.
 */
import { defineKvOperation, type MemoryKvAccess } from '../../core/store/kv-operation.ts';
import { COUNTERS_ADD } from './counters-lua.ts';

export interface CounterAdd {
  key: string;
  amount: number;
  /** The most the counter may hold after an amount >= 0; null for none. */
  ceiling: number | null;
}

export type CountersOutcome =
  | { status: 'applied'; values: number[] }
  /** The indexes of the counters that do not exist: nothing was added. */
  | { status: 'missing'; missing: number[] }
  /** The first counter that refused and its value: nothing was added. */
  | { status: 'refused'; index: number; value: number };

const INTEGER = /^-?\d+$/;

/** Plain loops, without a Map or a closure per counter: this runs twice per budgeted request (reserve and settle). */
function addInMemory(kv: MemoryKvAccess, counters: readonly CounterAdd[]): CountersOutcome {
  // Every counter is read and checked before any is written, as the Redis script does.
  const texts: string[] = [];
  let missing: number[] | undefined;
  for (let i = 0; i < counters.length; i++) {
    const text = kv.get(counters[i]!.key);
    if (text === null) (missing ??= []).push(i);
    else texts.push(text);
  }
  if (missing) return { status: 'missing', missing };
  const values: number[] = [];
  for (let i = 0; i < counters.length; i++) {
    if (!INTEGER.test(texts[i]!)) throw new Error(`value at ${counters[i]!.key} is not an integer`);
    values.push(Number(texts[i]));
  }
  for (let i = 0; i < counters.length; i++) {
    const { key, amount, ceiling } = counters[i]!;
    // A key named twice sees what its earlier entries add (as the script's running values do).
    let value = values[i]!;
    for (let j = 0; j < i; j++) if (counters[j]!.key === key) value += counters[j]!.amount;
    if (ceiling !== null && amount >= 0 && value + amount > ceiling) return { status: 'refused', index: i, value };
  }
  const applied: number[] = [];
  for (const { key, amount } of counters) {
    const value = Number(kv.get(key)) + amount;
    kv.set(key, String(value));
    applied.push(value);
  }
  return { status: 'applied', values: applied };
}

export const countersAdd = defineKvOperation<readonly CounterAdd[], CountersOutcome>({
  name: 'budget.countersAdd',
  redis: {
    lua: COUNTERS_ADD,
    keys: (counters) => counters.map((c) => c.key),
    argv: (counters) => counters.flatMap((c) => [c.amount, c.ceiling ?? '']),
    parse: (raw) => {
      const reply = (raw as Array<number | string>).map(Number);
      if (reply[0] === 1) return { status: 'applied', values: reply.slice(1) };
      if (reply[0] === 2) return { status: 'missing', missing: reply.slice(1) };
      return { status: 'refused', index: reply[1]!, value: reply[2]! };
    },
  },
  memory: addInMemory,
});
