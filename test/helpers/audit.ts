/** In-process gateways with the audit plugin: the config, and records read back in chain order. */
import { auditRecorderFor } from '../../plugins/audit/index.ts';
import type { TestGateway } from './gateway.ts';

export type AuditRow = { seq: number; kind: string; request_id: string | null; record: Record<string, any>; prev_hash: string; hash: string };

/** Chat and models behind [<audit entry>, auth] (audit first: refusals are recorded); `extra` is appended. */
export function auditConfig(baseUrl: string, audit = '- audit', extra = ''): string {
  return `
providers:
  openai:
    baseUrl: ${baseUrl}
    apiKey: sk-upstream-secret
models:
  - id: gpt-4o-mini
    provider: openai
    upstreamModel: gpt-4o-mini-2024-07-18
    pricing: {input: 0.15, output: 0.6}
routing:
  retries: 0
pipelines:
  - name: chat
    routes: [/v1/chat/completions, /v1/models]
    plugins:
${audit.split('\n').map((line) => `      ${line}`).join('\n')}
      - auth
${extra}`;
}

/** Writes what the recorder holds, then reads the chain in seq order. */
export async function auditRows(gw: TestGateway): Promise<AuditRow[]> {
  await auditRecorderFor(gw.gateway)!.flush();
  const rows = await gw.gateway.services.db.query<{ seq: string; kind: string; request_id: string | null; content: string; prev_hash: string; hash: string }>(
    'SELECT seq::text AS seq, kind, request_id, content, prev_hash, hash FROM audit_records ORDER BY audit_records.seq',
  );
  return rows.map((r) => ({ seq: Number(r.seq), kind: r.kind, request_id: r.request_id, record: JSON.parse(r.content), prev_hash: r.prev_hash, hash: r.hash }));
}

/** Waits until the request's record is written (records are made when the response closes). */
export async function auditRecordOf(gw: TestGateway, requestId: string, timeoutMs = 5000): Promise<AuditRow | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = (await auditRows(gw)).find((r) => r.request_id === requestId);
    if (row || Date.now() > deadline) return row;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
