/**
 * An aigw plugin in a package of its own, using the parts of the contract a real plugin needs:
 * - middleware: sets a response header, named and valued by its entry's config, on every answer;
 * - a KV operation of its own (countHit: a Lua script on Redis, its twin in memory), counting each caller's
 *   requests exactly across every instance sharing the KV;
 * - a migration (migrations/0001_first_seen.sql) for a table of its own, written the first time it sees a caller;
 * - a data-plane endpoint, GET /v1/example/hits, reporting both for the caller.
 * The gateway compiles this file as it loads it (no build step); `aigw/plugin` gives the contract and its types.
 */
import { fileURLToPath } from 'node:url';
import { defineKvOperation, definePlugin, GatewayError, type PluginEndpoint } from 'aigw/plugin';

interface ExampleHeaderConfig {
  header: string;
  value: string;
}

/** Adds one to a counter and returns the new count. */
const countHit = defineKvOperation<string, number>({
  name: 'example-header.countHit',
  redis: {
    lua: "return redis.call('INCR', KEYS[1])",
    keys: (key) => [key],
    argv: () => [],
    parse: (reply) => Number(reply),
  },
  memory: (kv, key) => {
    const count = Number(kv.get(key) ?? 0) + 1;
    kv.set(key, String(count));
    return count;
  },
});

const hitsKey = (callerId: string) => `example-header:hits:${callerId}`;

const hitsEndpoint: PluginEndpoint = {
  method: 'GET',
  path: '/v1/example/hits',
  capability: null,
  summary: 'How many chat-style requests the example plugin counted for the caller, and when it first saw it.',
  errorEnvelope: 'canonical',
  responses: { '200': { description: '{ hits, first_seen }' } },
  handler(services) {
    return async (ctx) => {
      const caller = ctx.state.gw.caller;
      if (!caller) throw new GatewayError('AUTH_REQUIRED', 'Authentication required');
      const hits = Number((await services.kv.get(hitsKey(caller.id))) ?? 0);
      const rows = await services.db.query<{ first_seen: Date | string }>('SELECT first_seen FROM example_first_seen WHERE caller_id = $1', [caller.id]);
      const firstSeen = rows[0] ? new Date(rows[0].first_seen).toISOString() : null;
      ctx.body = { hits, first_seen: firstSeen };
    };
  },
};

export default definePlugin<ExampleHeaderConfig>({
  name: 'example-header',
  description: 'Sets a response header from its config on every answer, and counts each caller\'s requests.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['value'],
    properties: {
      header: { type: 'string', pattern: '^[A-Za-z0-9-]+$', default: 'X-Example', description: 'The response header to set.' },
      value: { type: 'string', description: 'Its value.' },
    },
  },
  // It reads gw.caller: the loader refuses a pipeline that lists it before a plugin providing one (auth).
  requires: ['caller'],
  migrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  endpoints: [hitsEndpoint],
  setup(config, services) {
    return async (ctx, next) => {
      const gw = ctx.state.gw;
      if (gw.endpoint.kind === 'dispatch' && gw.caller) {
        const hits = await services.kv.run(countHit, hitsKey(gw.caller.id));
        if (hits === 1) {
          await services.db.query('INSERT INTO example_first_seen (caller_id) VALUES ($1) ON CONFLICT DO NOTHING', [gw.caller.id]);
        }
        ctx.set('X-Example-Hits', String(hits));
      }
      await next();
      // After next(): the answer exists and its headers are not written yet, streams included.
      ctx.set(config.header, config.value);
    };
  },
});
