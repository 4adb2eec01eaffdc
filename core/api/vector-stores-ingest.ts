/**
 * The `vector-store.ingest` job: one attached file of one store. The file's bytes are downloaded from its
 * provider, its text extracted (core/ingest/extract.ts) and chunked by tokens with overlap (core/ingest/chunk.ts),
 * the chunks embedded through the gateway's own dispatch in the name of the store's creator (usage and budgets see
 * it), and stored. A file the gateway cannot read (gone from the registry, a provider that serves no content, a
 * refusal, too large, not text) is skipped with a per-file warning; a failure that may pass (a provider or the
 * database unwell) is retried with backoff, up to vectorStores.maxAttempts runs, then the file is marked failed.
 */
import type { GatewayConfig } from '../config/types.ts';
import type { CallDeps } from '../dispatch/exchange.ts';
import { canDownload, downloadFile } from '../dispatch/files-call.ts';
import { passthroughTargets, type PassthroughEntry } from '../dispatch/passthrough.ts';
import type { ProviderRegistry } from '../dispatch/provider-registry.ts';
import { shouldFallBack } from '../dispatch/upstream-errors.ts';
import { GatewayError } from '../errors.ts';
import { chunkText } from '../ingest/chunk.ts';
import { extractText, UnsupportedDocumentError } from '../ingest/extract.ts';
import type { JobContext, JobHandler, JobResult, JobSpec } from '../jobs/types.ts';
import type { Log } from '../log.ts';
import { MAX_EMBED_INPUTS, type EmbedCaller, type EmbeddingService } from '../pipeline/embed.ts';
import type { Database } from '../store/database.ts';
import { findFile } from '../store/files.ts';
import { insertChunks, type NewChunk } from '../store/vector-chunks.ts';
import { findVectorStore, setStoreFileResult } from '../store/vector-stores.ts';

export const VECTOR_STORE_INGEST = 'vector-store.ingest';
/** The purposes whose files take part in vector stores (spec: Vector stores, file requirements). */
export const STORE_FILE_PURPOSES: readonly string[] = ['assistants', 'user_data'];

export interface IngestPayload {
  storeId: string;
  fileId: string;
  /** The store's creator, in whose name the chunks are embedded. */
  caller: EmbedCaller | null;
}

export const ingestJob = (payload: IngestPayload): JobSpec => ({
  kind: VECTOR_STORE_INGEST, key: `${VECTOR_STORE_INGEST}:${payload.storeId}:${payload.fileId}`, payload,
});

export interface IngestDeps extends CallDeps {
  db: Database;
  config: GatewayConfig;
  providers: ProviderRegistry;
  embeddings: EmbeddingService;
  logger?: Log;
}

/** A file that cannot be read as it is: running again would not change that. */
class Skip extends Error {}

/** Failures that may pass: what the dispatcher would try another target for, or a store unwell. */
const isTransient = (err: unknown): boolean => shouldFallBack(err) || (err instanceof GatewayError && err.code === 'STORE_UNAVAILABLE');

/** The configured providers' targets: read once per handler, the configuration does not change while it runs. */
type Targets = ReadonlyMap<string, PassthroughEntry>;

const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));

async function fileBytes(deps: IngestDeps, targets: Targets, tenantId: string, fileId: string, now: number, signal: AbortSignal): Promise<{ bytes: Buffer; filename: string; mimeType: string }> {
  const file = await findFile(deps.db, tenantId, fileId, now);
  if (!file) throw new Skip(`file ${fileId} is not in the registry (deleted or expired)`);
  const entry = targets.get(file.provider);
  if (!entry) throw new Skip(`the file's provider "${file.provider}" is no longer configured`);
  if (!canDownload(entry.provider)) throw new Skip(`provider "${file.provider}" serves no file content the gateway can download`);
  try {
    const bytes = await downloadFile(deps, entry.provider, entry.target, file.providerFileId, { maxBytes: deps.config.vectorStores.maxFileBytes, signal });
    return { bytes, filename: file.filename, mimeType: file.mimeType };
  } catch (err) {
    if (isTransient(err) || signal.aborted) throw err;
    throw new Skip(`downloading the file from ${file.provider} failed: ${reason(err)}`);
  }
}

async function ingest(deps: IngestDeps, targets: Targets, payload: IngestPayload, ctx: JobContext): Promise<number | null> {
  const tenantId = payload.caller?.tenantId ?? 'default';
  const store = await findVectorStore(deps.db, tenantId, payload.storeId, ctx.now());
  if (!store) return null; // deleted or expired meanwhile: nothing to do
  const file = await fileBytes(deps, targets, tenantId, payload.fileId, ctx.now(), ctx.signal);
  let text: string;
  try {
    text = (await extractText(file.bytes, { filename: file.filename, mimeType: file.mimeType })).text;
  } catch (err) {
    if (err instanceof UnsupportedDocumentError) throw new Skip(err.message);
    throw new Skip(`the file's text could not be read: ${reason(err)}`);
  }
  const { chunkTokens, chunkOverlapTokens } = deps.config.vectorStores;
  const chunks = await chunkText(text, { maxTokens: chunkTokens, overlapTokens: chunkOverlapTokens });
  if (chunks.length === 0) throw new Skip(`file ${payload.fileId} holds no text`);
  const embedded: NewChunk[] = [];
  for (let start = 0; start < chunks.length; start += MAX_EMBED_INPUTS) {
    const batch = chunks.slice(start, start + MAX_EMBED_INPUTS);
    const { vectors } = await deps.embeddings.embed({
      model: store.embeddingModel, input: batch.map((c) => c.content), caller: payload.caller ?? undefined,
      applyPolicy: false, purpose: 'vector-store', signal: ctx.signal,
    });
    batch.forEach((chunk, i) => embedded.push({ index: chunk.index, content: chunk.content, embedding: vectors[i]! }));
  }
  return insertChunks(deps.db, { tenantId, storeId: payload.storeId, fileId: payload.fileId, chunks: embedded, now: ctx.now() });
}

/** Backoff between runs of a file whose failure may pass: 5 s, 10 s, 20 s ... at most 5 minutes. */
const backoffMs = (attempt: number) => Math.min(300_000, 5_000 * 2 ** Math.max(0, attempt - 1));

export function ingestHandler(deps: IngestDeps): JobHandler {
  const targets = passthroughTargets(deps.config, deps.providers);
  return async (ctx): Promise<JobResult> => {
    const payload = ctx.job.payload as IngestPayload;
    const tenantId = payload.caller?.tenantId ?? 'default';
    const settle = (result: Parameters<typeof setStoreFileResult>[4]) => setStoreFileResult(deps.db, tenantId, payload.storeId, payload.fileId, result, ctx.now());
    try {
      const stored = await ingest(deps, targets, payload, ctx);
      if (stored !== null) await settle({ status: 'completed' });
      deps.logger?.info({ store: payload.storeId, file: payload.fileId, chunks: stored }, 'vector-store.ingest: file ingested');
      return { status: 'done' };
    } catch (err) {
      if (ctx.signal.aborted) throw err; // shutdown or a lost lease: the runner hands the job back
      if (err instanceof Skip) {
        deps.logger?.warn({ store: payload.storeId, file: payload.fileId, warning: err.message }, 'vector-store.ingest: file skipped');
        await settle({ status: 'skipped', warning: err.message });
        return { status: 'done' };
      }
      if (isTransient(err) && ctx.job.attempts < deps.config.vectorStores.maxAttempts) {
        deps.logger?.warn({ err, store: payload.storeId, file: payload.fileId, attempt: ctx.job.attempts }, 'vector-store.ingest: failed; trying again later');
        return { status: 'retry', at: ctx.now() + backoffMs(ctx.job.attempts), error: reason(err) };
      }
      deps.logger?.warn({ err, store: payload.storeId, file: payload.fileId }, 'vector-store.ingest: file failed');
      await settle({ status: 'failed', warning: `ingestion failed: ${reason(err)}` });
      return { status: 'done' };
    }
  };
}
