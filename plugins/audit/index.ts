/**
 * audit: one hash-chained record per request on every route it is listed on (local endpoints and refusals
 * included), and one per admin API write (onAdminWrite). Records are made when the response closes, queued in
 * one recorder per gateway (core/store/buffered-recorder.ts: batched, retried, back-pressure) and appended to
 * the chain under an advisory lock (chain.ts), so instances sharing the database keep one order. What cannot be
 * written by the shutdown deadline is spooled to the data folder and appended at the next start (spool.ts).
 * `aigw audit verify` (command.ts) names the first edited, deleted, inserted or reordered record. Requires
 * nothing: listed before auth it records refused requests too.
 */
import { orderedUuid } from '../../core/store/ids.ts';
import { fileURLToPath } from 'node:url';
import type { ModelConfig } from '../../core/config/types.ts';
import { definePlugin } from '../../core/pipeline/plugin.ts';
import type { PluginServices } from '../../core/pipeline/services.ts';
import type { AdminWriteEvent } from '../../core/pipeline/routes.ts';
import { BufferedRecorder } from '../../core/store/buffered-recorder.ts';
import { auditAdminRoutes } from './admin-routes.ts';
import { appendRecords, canonicalJson, type PendingRecord } from './chain.ts';
import { auditCommand } from './command.ts';
import { checkEntries, configSchema, firstEntry, PLUGIN_NAME, type AuditConfig } from './config.ts';
import { RequestAudit } from './record.ts';
import { startPruning } from './retention.ts';
import { replaySpool, spoolFolder, spoolRecords } from './spool.ts';

/** How long a stream's record waits, after its response closed, for the stream's ending to come back. */
const STREAM_ENDING_GRACE_MS = 2000;

export interface AuditShared {
  /** Made at init when a pipeline lists the plugin; admin writes are recorded only then. */
  recorder?: BufferedRecorder<PendingRecord>;
  /** Settles once the records spooled at the last shutdown are in the chain (or could not be). */
  replayed: Promise<void>;
}

function adminRecord(event: AdminWriteEvent): PendingRecord {
  const id = orderedUuid();
  const content = {
    v: 1, type: 'admin', id, time: new Date(event.time).toISOString(), requestId: event.requestId,
    actor: event.actor, tenantId: event.tenantId, method: event.method, path: event.path, route: event.route,
    params: event.params, status: event.status, errorCode: event.errorCode, clientIp: event.clientIp,
  };
  return {
    id, kind: 'admin', occurredAt: event.time, requestId: event.requestId, tenantId: event.tenantId, apiKeyId: null,
    route: event.route, status: event.status, content: canonicalJson(content),
  };
}

/** One recorder and one pruning timer per gateway, from the first entry's settings; spooled records go first. */
function init(services: PluginServices): AuditShared {
  const settings = firstEntry(services.config);
  if (!settings) return { replayed: Promise.resolve() };
  const folder = spoolFolder(services.config.storage.dataDir);
  const recorder = new BufferedRecorder<PendingRecord>({
    label: PLUGIN_NAME,
    flushIntervalMs: settings.flushIntervalMs,
    batchSize: settings.batchSize,
    maxPending: settings.maxPending,
    write: (batch) => appendRecords(services.db, batch),
    logger: services.logger,
    onUnwritten: async (records) => {
      const file = await spoolRecords(folder, records);
      services.logger.error({ file, records: records.length }, 'audit: records the database did not take before shutdown are spooled; the next start appends them');
    },
  });
  // The spool is older than anything queued now: the recorder's timer starts once it is in the chain (or failed).
  const replayed = replaySpool(folder, services.db, services.logger)
    .catch((err: unknown) => services.logger.error({ err, folder }, 'audit: spooled records could not be appended yet; they stay in the folder for the next start'))
    .then(() => { recorder.start(); });
  const stopPruning = settings.retentionDays !== undefined && settings.checkpointKey !== undefined
    ? startPruning({ db: services.db, logger: services.logger, now: services.clock.now, retentionDays: settings.retentionDays, key: settings.checkpointKey, intervalMs: settings.pruneIntervalMs })
    : undefined;
  services.onClose(async () => {
    await stopPruning?.();
    await replayed;
    await recorder.close(services.config.server.shutdownTimeoutMs);
  });
  return { recorder, replayed };
}

export default definePlugin<AuditConfig, AuditShared>({
  name: PLUGIN_NAME,
  description: 'A tamper-evident audit log: one hash-chained record per request and per admin write, verified by `aigw audit verify`.',
  configSchema,
  migrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  adminRoutes: auditAdminRoutes<AuditShared>(),
  commands: [auditCommand],
  checkEntries,
  init,
  onAdminWrite(event, _services, shared) {
    const recorder = shared.recorder;
    if (!recorder) return;
    const wait = recorder.admit();
    if (!wait) return recorder.record(adminRecord(event));
    return wait.then(() => recorder.record(adminRecord(event)));
  },
  setup(config, services, shared) {
    const recorder = shared.recorder;
    if (!recorder) throw new Error('plugin "audit": no recorder (init found no audit entry in the pipelines)');
    const models = new Map<string, ModelConfig>(services.config.models.map((m) => [m.id, m]));
    const options = { bodies: config.bodies, maxBodyBytes: config.maxBodyBytes, models, now: services.clock.now };

    return async (ctx, next) => {
      const gw = ctx.state.gw;
      // Back-pressure: when the queue is full, wait here, before anything is served, for room.
      const wait = recorder.admit(() => gw.signal);
      if (wait) await wait;
      const audit = new RequestAudit(gw, options, services.clock.now());
      const hand = (status: number, finished: boolean, code: string | null) => {
        audit.finish(status, finished, code).then(
          (record) => { if (record) recorder.record(record); },
          (err: unknown) => services.logger.error({ err, requestId: gw.requestId }, 'audit: a record could not be made'),
        );
      };
      let closed: (() => void) | undefined;
      if (gw.endpoint.kind === 'dispatch') {
        gw.stage({
          chunk: (chunk) => void audit.chunk(chunk),
          complete: (outcome) => {
            audit.ended(outcome);
            closed?.();
          },
        });
      }
      ctx.res.once('close', () => {
        // A client that left before any answer was sent: 499 (nginx's "client closed request"), not Koa's default.
        const status = ctx.res.headersSent || ctx.res.writableFinished ? ctx.res.statusCode : 499;
        const finished = ctx.res.writableFinished;
        const body = ctx.body as { error?: { code?: unknown } } | undefined;
        const code = typeof body?.error?.code === 'string' ? body.error.code : null;
        if (!gw.stream || audit.streamEnded) return hand(status, finished, code);
        // A stream's ending travels back after the response closed (or never comes, if it was never sent).
        const timer = setTimeout(() => hand(status, finished, code), STREAM_ENDING_GRACE_MS);
        timer.unref();
        closed = () => {
          clearTimeout(timer);
          hand(status, finished, code);
        };
      });
      try {
        await next();
      } catch (err) {
        audit.failed(err);
        throw err;
      }
    };
  },
});

/** The gateway's audit recorder (tests flush it). */
export function auditRecorderFor(gateway: { pluginState(name: string): unknown }): BufferedRecorder<PendingRecord> | undefined {
  return (gateway.pluginState(PLUGIN_NAME) as AuditShared | undefined)?.recorder;
}
