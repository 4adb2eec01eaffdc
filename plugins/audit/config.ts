/**
 * The audit plugin's config. Bodies are per entry (a pipeline may record them, another not); the recorder, the
 * retention and the checkpoint key belong to the gateway, so every entry must agree on them, and the first
 * entry of the file gives them (to the recorder made at init, and to `aigw audit verify`).
 */
import type { GatewayConfig } from '../../core/config/types.ts';
import type { JsonSchema } from '../../core/json-schema.ts';
import type { BodiesSetting } from './bodies.ts';

export const PLUGIN_NAME = 'audit';

export interface AuditConfig {
  bodies: BodiesSetting;
  maxBodyBytes: number;
  flushIntervalMs: number;
  batchSize: number;
  maxPending: number;
  retentionDays?: number;
  checkpointKey?: string;
  pruneIntervalMs: number;
}

/** The settings every entry must share (one recorder and one chain per gateway). */
export const GATEWAY_WIDE = ['flushIntervalMs', 'batchSize', 'maxPending', 'retentionDays', 'checkpointKey', 'pruneIntervalMs'] as const;
export type GatewayWide = Pick<AuditConfig, (typeof GATEWAY_WIDE)[number]>;

export const MIN_CHECKPOINT_KEY_BYTES = 32;

export const configSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    bodies: {
      type: 'string', enum: ['none', 'request', 'response', 'both'], default: 'none',
      description: 'Which bodies the record keeps: none (default), the request, the response (a stream\'s text), or both; redacted of credential-looking strings and cut at maxBodyBytes.',
    },
    maxBodyBytes: { type: 'integer', minimum: 256, maximum: 1048576, default: 16384, description: 'Largest body kept in a record, in bytes of UTF-8; longer ones are cut and marked truncated.' },
    flushIntervalMs: { type: 'integer', minimum: 1, maximum: 86400000, default: 1000, description: 'Write the queued records at least this often (ms). Same in every entry.' },
    batchSize: { type: 'integer', minimum: 1, maximum: 10000, default: 500, description: 'Records per chained write; a write starts as soon as this many are queued. Same in every entry.' },
    maxPending: {
      type: 'integer', minimum: 1, maximum: 10000000, default: 100000,
      description: 'Records held in memory (queued plus in flight) at most; when full, new requests wait for room before they are served. Same in every entry.',
    },
    retentionDays: {
      type: 'integer', minimum: 1, maximum: 36500,
      description: 'Delete records older than this many days, leaving a signed checkpoint so the chain still verifies. Needs checkpointKey. Unset: records are kept. Same in every entry.',
    },
    checkpointKey: {
      type: 'string', minLength: MIN_CHECKPOINT_KEY_BYTES,
      description: 'HMAC-SHA256 key (at least 32 bytes) that signs pruning checkpoints; give it as ${AIGW_AUDIT_KEY}. `aigw audit verify` needs the same key. Same in every entry.',
    },
    pruneIntervalMs: { type: 'integer', minimum: 1000, maximum: 86400000, default: 3600000, description: 'How often each instance looks for records past retentionDays (ms). Same in every entry.' },
  },
};

export const gatewayWide = (config: AuditConfig): GatewayWide => Object.fromEntries(GATEWAY_WIDE.map((k) => [k, config[k]])) as GatewayWide;
const settingsText = (config: AuditConfig) => JSON.stringify(GATEWAY_WIDE.map((k) => (k === 'checkpointKey' ? config[k] !== undefined : config[k] ?? null)));

export function checkEntries(entries: readonly AuditConfig[]): Array<{ entry: number; message: string }> {
  const first = entries[0];
  return entries.flatMap((entry, i) => {
    const problems: string[] = [];
    if (entry.retentionDays !== undefined && entry.checkpointKey === undefined) {
      problems.push('retentionDays needs checkpointKey: pruning leaves a checkpoint signed with it, or the chain could not be verified');
    }
    if (entry.checkpointKey !== undefined && Buffer.byteLength(entry.checkpointKey, 'utf8') < MIN_CHECKPOINT_KEY_BYTES) {
      problems.push(`checkpointKey must be at least ${MIN_CHECKPOINT_KEY_BYTES} bytes`);
    }
    if (first && i > 0 && (settingsText(entry) !== settingsText(first) || entry.checkpointKey !== first.checkpointKey)) {
      problems.push(`every audit entry shares one recorder and one chain: ${GATEWAY_WIDE.join(', ')} must be the same as in the first entry`);
    }
    return problems.map((message) => ({ entry: i, message }));
  });
}

/** The first audit entry of the file (defaults applied), or undefined when no pipeline lists the plugin. */
export function firstEntry(config: Readonly<GatewayConfig>): AuditConfig | undefined {
  for (const pipeline of config.pipelines) {
    const entry = pipeline.plugins.find((p) => p.name === PLUGIN_NAME);
    if (entry) return entry.config as unknown as AuditConfig;
  }
  return undefined;
}
