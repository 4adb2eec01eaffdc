/**
 * The realtime KV operations, each one atomic step on the shared KV (Redis across instances):
 * - a ticket is redeemed by reading and deleting it at once, so of two connections presenting it one gets it;
 * - the deployment's session slots are a sorted set of session ids scored by when the slot lapses: a slot is
 *   taken only while fewer than the cap are live, lapsed ones are dropped first. An unredeemed ticket's slot
 *   lapses with the ticket; a connected session's is renewed while it lives, so an instance that dies without
 *   closing its sessions frees their slots within one lease.
 */
import { createHash } from 'node:crypto';
import { defineKvOperation } from '../store/kv-operation.ts';

const TICKETS = 'realtime:ticket:';
const SLOTS = 'realtime:slots';

/** Keyed by the ticket's hash: whoever reads the KV's keys cannot connect with them. */
export const ticketKey = (ticket: string) => TICKETS + createHash('sha256').update(ticket).digest('base64url');

export const redeemTicket = defineKvOperation<{ ticket: string }, string | null>({
  name: 'realtime.redeemTicket',
  redis: {
    lua: `local v = redis.call('GET', KEYS[1])
if v then redis.call('DEL', KEYS[1]) end
return v`,
    keys: ({ ticket }) => [ticketKey(ticket)],
    argv: () => [],
    parse: (reply) => (typeof reply === 'string' ? reply : null),
  },
  memory: (kv, { ticket }) => {
    const value = kv.get(ticketKey(ticket));
    if (value !== null) kv.del(ticketKey(ticket));
    return value;
  },
});

interface Slots {
  lapses: Map<string, number>;
  clear(): void;
}

const slots = (kv: Parameters<typeof redeemTicket.memory>[0]): Slots =>
  kv.state<Slots>(SLOTS, () => {
    const lapses = new Map<string, number>();
    return { lapses, clear: () => lapses.clear() };
  });

const dropLapsed = (s: Slots, now: number) => {
  for (const [id, until] of s.lapses) if (until <= now) s.lapses.delete(id);
};

/** Takes a slot for `id` until `until` (ms) when fewer than `cap` are live; whether it did. */
export const takeSlot = defineKvOperation<{ id: string; cap: number; now: number; until: number }, boolean>({
  name: 'realtime.takeSlot',
  redis: {
    lua: `redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
return 1`,
    keys: () => [SLOTS],
    argv: ({ id, cap, now, until }) => [now, cap, until, id],
    parse: (reply) => Number(reply) === 1,
  },
  memory: (kv, { id, cap, now, until }) => {
    const s = slots(kv);
    dropLapsed(s, now);
    if (s.lapses.size >= cap) return false;
    s.lapses.set(id, until);
    return true;
  },
});

/** Moves a live slot's lapse to `until`; false when the slot had lapsed already (it is not taken again). */
export const renewSlot = defineKvOperation<{ id: string; now: number; until: number }, boolean>({
  name: 'realtime.renewSlot',
  redis: {
    lua: `local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) <= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1`,
    keys: () => [SLOTS],
    argv: ({ id, now, until }) => [id, now, until],
    parse: (reply) => Number(reply) === 1,
  },
  memory: (kv, { id, now, until }) => {
    const s = slots(kv);
    const current = s.lapses.get(id);
    if (current === undefined || current <= now) return false;
    s.lapses.set(id, until);
    return true;
  },
});

export const releaseSlot = defineKvOperation<{ id: string }, boolean>({
  name: 'realtime.releaseSlot',
  redis: {
    lua: `return redis.call('ZREM', KEYS[1], ARGV[1])`,
    keys: () => [SLOTS],
    argv: ({ id }) => [id],
    parse: (reply) => Number(reply) === 1,
  },
  memory: (kv, { id }) => slots(kv).lapses.delete(id),
});

/** Live slots now (tests, health). */
export const liveSlots = defineKvOperation<{ now: number }, number>({
  name: 'realtime.liveSlots',
  redis: {
    lua: `return redis.call('ZCOUNT', KEYS[1], '(' .. ARGV[1], '+inf')`,
    keys: () => [SLOTS],
    argv: ({ now }) => [now],
    parse: (reply) => Number(reply),
  },
  memory: (kv, { now }) => {
    const s = slots(kv);
    dropLapsed(s, now);
    return s.lapses.size;
  },
});
