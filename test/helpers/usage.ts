/** In-process gateways with the usage plugin: the config, keys with their ids, and records read back. */
import assert from 'node:assert/strict';
import { usageRecorderFor } from '../../plugins/usage/index.ts';
import { sleep } from '../fakes/openai.ts';
import type { GatewayServices } from '../../core/gateway.ts';
import { ADMIN_TOKEN, postJson, type TestGateway } from './gateway.ts';

export type Row = Record<string, any>;

/** Two models (one priced), no retries, and a chat pipeline [auth, <usage entry>]; `plugins` is a top-level block. */
export function usageConfig(baseUrl: string, usage = '- usage', plugins = ''): string {
  return `
providers:
  openai:
    baseUrl: ${baseUrl}
    apiKey: sk-upstream-secret
models:
  - id: gpt-4o-mini
    provider: openai
    upstreamModel: gpt-4o-mini-2024-07-18
    pricing: {input: 0.15, output: 0.6, cachedInput: 0.075}
  - id: plain
    provider: openai
routing:
  retries: 0
${plugins}
pipelines:
  - name: chat
    routes: [/v1/chat/completions, /v1/messages]
    plugins:
      - auth
${usage.split('\n').map((line) => `      ${line}`).join('\n')}
`;
}

export async function createKey(gw: TestGateway, fields: Record<string, unknown> = {}): Promise<{ id: string; key: string }> {
  const created = await postJson(`${gw.url}/admin/v1/keys`, { name: 'usage-test', ...fields }, { authorization: `Bearer ${ADMIN_TOKEN}` });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return { id: created.body.id, key: created.body.key };
}

/** Flushes the gateway's recorder until the request has its record(s), then returns them. */
export async function recordsOf(gw: TestGateway, requestId: string, timeoutMs = 5000): Promise<Row[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await usageRecorderFor(gw.gateway)!.flush();
    const rows = await gw.gateway.services.db.query<Row>('SELECT * FROM usage_records WHERE request_id = $1', [requestId]);
    if (rows.length > 0 || Date.now() > deadline) return rows;
    await sleep(20);
  }
}

type Db = GatewayServices['db'];

/**
 * Makes the gateway's database refuse the usage batch writes (the embedded database's binary COPY and the INSERT) while
 * `failing` is set; every other statement goes through, as does `query` for the test's own reads. restore() puts
 * the database's own methods back.
 */
export function refuseUsageWrites(db: Db): { failing: boolean; refused: number; query: Db['query']; restore(): void } {
  const { query: ownQuery, copyBinary } = db;
  const query = ownQuery.bind(db);
  const writable = db as { query: Db['query']; copyBinary?: Db['copyBinary'] };
  const state = {
    failing: true,
    refused: 0,
    query,
    restore: () => {
      writable.query = ownQuery;
      if (copyBinary) writable.copyBinary = copyBinary;
    },
  };
  const refuse = () => {
    state.refused++;
    throw new Error('connection refused');
  };
  writable.query = (async (sql: string, params?: unknown[]) => {
    if (state.failing && sql.startsWith('INSERT INTO usage_records')) refuse();
    return query(sql, params);
  }) as Db['query'];
  if (copyBinary) {
    writable.copyBinary = async (table, columns, data) => {
      if (state.failing && table === 'usage_records') refuse();
      return copyBinary(table, columns, data);
    };
  }
  return state;
}
