/**
 * usage: exactly one usage record per request that reaches it (modality, tokens, search units, cost, latency,
 * time to first byte, status, error code), written in batches by one recorder per gateway
 * (core/store/buffered-recorder.ts) that every pipeline entry shares. Reads the caller, so it requires "caller"
 * (auth provides it). Owns the usage_records table (migrations/), GET /v1/usage (endpoint.ts) and
 * GET /admin/v1/usage (admin-routes.ts). Only
 * dispatch endpoints are recorded: local endpoints (/v1/models, /v1/usage) and the passthrough pass through.
 * Work metered outside a request (a batch) is one record, written at once (metered.ts).
 */
import type { ModelConfig } from '../../core/config/types.ts';
import type { PluginServices } from '../../core/pipeline/plugin.ts';
import { fileURLToPath } from 'node:url';
import { definePlugin } from '../../core/pipeline/plugin.ts';
import { usageRowQueue, writeUsageBatch, type UsageBatch, type UsageRecord } from './record.ts';
import { BufferedRecorder, type RecorderSettings } from '../../core/store/buffered-recorder.ts';
import { usageEndpoint } from './endpoint.ts';
import { usageAdminRoutes } from './admin-routes.ts';
import { RequestMeter } from './meter.ts';
import { recordMeteredWork } from './metered.ts';

export type UsagePluginConfig = RecorderSettings;

/**
 * How long a stream's record may wait, after its response closed, for the stream's ending: a stream that was
 * never sent (the client left first, or a plugin failed after it was made) has none, and is recorded without.
 */
const STREAM_ENDING_GRACE_MS = 2000;

/**
 * Requests metered and not yet recorded. A stream cut at shutdown is recorded once its ending has travelled back
 * (and its tokens are estimated): the recorder closes after they are all in, or after a bound.
 */
class OpenMeters {
  private count = 0;
  private onIdle: (() => void) | null = null;

  /** Counts one request in; the function returned counts it out (once, however often it is called). */
  open(): () => void {
    this.count++;
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      if (--this.count === 0) this.onIdle?.();
    };
  }

  settled(timeoutMs: number): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.onIdle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

/** What every entry of one gateway shares: one recorder, made by the first entry set up. */
export interface UsageShared {
  recorder?: BufferedRecorder<UsageRecord, UsageBatch>;
  settings?: string;
  meters: OpenMeters;
}

const recorderSettings = (config: UsagePluginConfig) =>
  JSON.stringify({ flushIntervalMs: config.flushIntervalMs, batchSize: config.batchSize, maxPending: config.maxPending });

const differing = (settings: string, first: string) =>
  `every usage entry shares one recorder, and this entry's settings ${settings} differ from the first entry's ${first}`;

function sharedRecorder(config: UsagePluginConfig, services: PluginServices, shared: UsageShared): BufferedRecorder<UsageRecord, UsageBatch> {
  const settings = recorderSettings(config);
  if (shared.recorder) {
    // checkEntries refuses such a config at load; a config built in code reaches this.
    if (shared.settings !== settings) throw new Error(`plugin "usage": ${differing(settings, shared.settings!)}`);
    return shared.recorder;
  }
  const recorder = new BufferedRecorder<UsageRecord, UsageBatch>({
    ...config,
    label: 'usage',
    // Rows as bytes where the database takes a COPY: no record waits for its batch on the JavaScript heap.
    ...(services.db.copyBinary ? { queue: usageRowQueue(config.batchSize) } : {}),
    write: (batch) => writeUsageBatch(services.db, batch),
    logger: services.logger,
  }).start();
  shared.recorder = recorder;
  shared.settings = settings;
  // Runs after in-flight requests have finished, before the database closes; the endings of streams that were
  // cut (by the shutdown deadline) are still on their way back, and are waited for.
  services.onClose(async () => {
    await shared.meters.settled(STREAM_ENDING_GRACE_MS + 1000);
    await recorder.close(services.config.server.shutdownTimeoutMs);
  });
  return recorder;
}

export default definePlugin<UsagePluginConfig, UsageShared>({
  name: 'usage',
  description: 'Records one usage record per request (tokens, cost, latency, status), buffered and written in batches.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      flushIntervalMs: { type: 'integer', minimum: 1, default: 1000, description: 'Write the queued records at least this often (ms).' },
      batchSize: { type: 'integer', minimum: 1, maximum: 10000, default: 500, description: 'Records per multi-row insert; a write starts as soon as this many are queued.' },
      maxPending: {
        type: 'integer', minimum: 1, default: 100000,
        description: 'Records held in memory (queued plus in flight) at most; when full, new requests wait for room before they are served.',
      },
    },
  },
  requires: ['caller'],
  migrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  endpoints: [usageEndpoint],
  adminRoutes: usageAdminRoutes,
  init: (): UsageShared => ({ meters: new OpenMeters() }),
  onMeteredWork: (work, services) => recordMeteredWork(services.db, work, services),
  checkEntries(entries) {
    const first = entries[0] && recorderSettings(entries[0]);
    return entries.flatMap((entry, i) => {
      const settings = recorderSettings(entry);
      return settings === first ? [] : [{ entry: i, message: differing(settings, first!) }];
    });
  },
  setup(config, services, shared) {
    const recorder = sharedRecorder(config, services, shared);
    const models = new Map<string, ModelConfig>(services.config.models.map((m) => [m.id, m]));
    const deps = { models, logger: services.logger, record: (record: UsageRecord) => recorder.record(record) };

    return async (ctx, next) => {
      const gw = ctx.state.gw;
      if (gw.endpoint.kind !== 'dispatch') return next();
      const arrivedAt = services.clock.now();
      // Back-pressure: when the queue is full, wait here (before anything is served) for room.
      const wait = recorder.admit(() => gw.signal);
      if (wait) await wait;

      const meter = new RequestMeter(gw, deps, arrivedAt, shared.meters.open());
      // The meter is its own stage (chunk and complete): no closures made per request for it.
      gw.stage(meter);
      ctx.res.once('close', () => {
        if (meter.recorded) return;
        const finished = ctx.res.writableFinished;
        const body = ctx.body as { error?: { code?: unknown } } | undefined;
        const code = typeof body?.error?.code === 'string' ? body.error.code : null;
        setTimeout(() => meter.fallback(finished, code), gw.stream ? STREAM_ENDING_GRACE_MS : 0).unref();
      });
      try {
        await next();
      } catch (err) {
        meter.failed(err);
        throw err;
      }
      if (gw.stream) return; // its stage records it when the stream ends
      if (gw.result) meter.answered(gw.result);
    };
  },
});

/** The gateway's usage recorder, once a pipeline entry has set the plugin up: tests flush it. */
export function usageRecorderFor(gateway: { pluginState(name: string): unknown }): BufferedRecorder<UsageRecord, UsageBatch> | undefined {
  return (gateway.pluginState('usage') as UsageShared | undefined)?.recorder;
}
