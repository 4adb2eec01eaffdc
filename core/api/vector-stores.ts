/**
 * /v1/vector_stores (capability `vector-stores`): gateway-owned vector stores. A store belongs to the tenant that
 * created it; its files are ingested in the background (vector-stores-ingest.ts, one job per file) and searched
 * by cosine similarity. Storage: core/store/vector-stores.ts and vector-chunks.ts (pgvector, or an exact scan).
 */
import type { ModelRoute } from '../dispatch/routing.ts';
import { GatewayError, validationError } from '../errors.ts';
import { jsonBodyReader } from '../ingress/body.ts';
import type { LocalEndpoint, LocalEndpointDeps } from '../ingress/endpoint.ts';
import type { GatewayContext, GatewayMiddleware } from '../pipeline/context.ts';
import type { EmbedCaller } from '../pipeline/embed.ts';
import { callerOf } from '../pipeline/recorded-caller.ts';
import { findFile } from '../store/files.ts';
import { pageRequest } from '../store/pagination.ts';
import {
  addStoreFiles, deleteVectorStore, findVectorStore, insertVectorStore, listStoreFiles, listVectorStores, newVectorStoreId,
  removeStoreFile, updateVectorStore, vectorStoreNotFound, vectorStorePositionAfter, type StoreFileRecord, type VectorStoreRecord,
} from '../store/vector-stores.ts';
import { deletedSchema } from '../json-schema.ts';
import { compileRequestSchema } from '../validation.ts';
import { ingestJob, STORE_FILE_PURPOSES } from './vector-stores-ingest.ts';
import {
  attachFilesSchema, createStoreSchema, DEFAULT_TOP_K, patchStoreSchema, searchResultSchema, searchSchema, storeFilesSchema, storeListSchema, storeObjectSchema,
} from './vector-stores-schemas.ts';

const ROUTE = '/v1/vector_stores';
const BODY_LIMIT = 1024 * 1024;
const MAX_METADATA_BYTES = 16 * 1024;
const readBody = jsonBodyReader(BODY_LIMIT);

interface CreateBody { name: string; file_ids?: string[]; embedding_model?: string; expires_in_seconds?: number | null; metadata?: Record<string, unknown> | null }
interface PatchBody { name?: string; expires_in_seconds?: number | null; metadata?: Record<string, unknown> | null }
const validateCreate = compileRequestSchema<CreateBody>(createStoreSchema);
const validatePatch = compileRequestSchema<PatchBody>(patchStoreSchema);
const validateAttach = compileRequestSchema<{ file_ids: string[] }>(attachFilesSchema);
const validateSearch = compileRequestSchema<{ query: string; top_k?: number; threshold?: number }>(searchSchema);

const seconds = (ms: number) => Math.floor(ms / 1000);
const idOf = (ctx: GatewayContext) => (ctx as GatewayContext & { params: { id: string } }).params.id;

export function storeObject(store: VectorStoreRecord) {
  return {
    id: store.id, object: 'vector_store' as const, name: store.name, embedding_model: store.embeddingModel,
    file_counts: store.fileCounts, chunk_count: store.chunkCount, status: store.status, created_at: seconds(store.createdAt),
    expires_at: store.expiresAt === null ? null : seconds(store.expiresAt), metadata: store.metadata,
  };
}

const fileObject = (file: StoreFileRecord) => ({ file_id: file.fileId, status: file.status, chunk_count: file.chunkCount, warning: file.warning });

function checkMetadata(metadata: Record<string, unknown> | null | undefined): void {
  if (metadata && Buffer.byteLength(JSON.stringify(metadata)) > MAX_METADATA_BYTES) {
    throw validationError([{ path: '/metadata', message: `must be at most ${MAX_METADATA_BYTES} bytes as JSON` }]);
  }
}

/** The caller as background work records it: the store's ingestion embeds in its name. */
function embedCaller(ctx: GatewayContext): EmbedCaller | null {
  const caller = ctx.state.gw.caller;
  return caller ? { kind: caller.kind, id: caller.id, tenantId: caller.tenantId, organizationId: caller.organizationId, departmentId: caller.departmentId } : null;
}

/** The configured model a store embeds with, under the caller's policy; one that cannot embed is refused now. */
function embeddingModel(deps: LocalEndpointDeps, ctx: GatewayContext, requested: string | undefined): string {
  const model = requested ?? deps.config.vectorStores.embeddingModel;
  if (model === undefined) {
    throw validationError([{ path: '/embedding_model', message: 'is required: this deployment sets no vectorStores.embeddingModel' }]);
  }
  const { modelId, route } = deps.routing.resolve(model, ctx.state.gw.caller?.policy);
  if (!embeds(deps, route)) {
    throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `Model "${modelId}" has no target whose provider serves embeddings`, { model: modelId, capability: 'embeddings' });
  }
  return modelId;
}

const embeds = (deps: LocalEndpointDeps, route: ModelRoute) => route.targets.some((t) => deps.providers.get(t.slug)?.capabilities.embeddings);

/** Every id names a live file of the tenant with a purpose that takes part in vector stores. */
async function checkFiles(deps: LocalEndpointDeps, tenantId: string, ids: readonly string[]): Promise<void> {
  const now = deps.clock.now();
  for (const [i, id] of ids.entries()) {
    const file = await findFile(deps.db, tenantId, id, now);
    if (!file) throw new GatewayError('NOT_FOUND', `No file ${id}`, { id, path: `/file_ids/${i}` });
    if (!STORE_FILE_PURPOSES.includes(file.purpose)) {
      throw validationError([{ path: `/file_ids/${i}`, message: `file ${id} has purpose "${file.purpose}": only ${STORE_FILE_PURPOSES.join(' and ')} files go into vector stores` }]);
    }
  }
}

/** Attaches the files and enqueues one ingestion job for each newly attached one; null when the store is gone. */
async function attach(deps: LocalEndpointDeps, ctx: GatewayContext, tenantId: string, storeId: string, fileIds: readonly string[]): Promise<boolean> {
  const attached = await addStoreFiles(deps.db, tenantId, storeId, fileIds, deps.clock.now());
  if (!attached) return false;
  const caller = embedCaller(ctx);
  for (const fileId of attached.added) await deps.jobs.enqueue(ingestJob({ storeId, fileId, caller }));
  return true;
}

async function storeOf(deps: LocalEndpointDeps, ctx: GatewayContext): Promise<VectorStoreRecord> {
  const store = await findVectorStore(deps.db, callerOf(ctx).tenantId, idOf(ctx), deps.clock.now());
  if (!store) throw vectorStoreNotFound(idOf(ctx));
  return store;
}

const expiresAt = (deps: LocalEndpointDeps, ttl: number | null | undefined) => (ttl === null || ttl === undefined ? null : deps.clock.now() + ttl * 1000);

function createHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    const body = validateCreate(await readBody(ctx));
    checkMetadata(body.metadata);
    const caller = callerOf(ctx);
    const model = embeddingModel(deps, ctx, body.embedding_model);
    const fileIds = body.file_ids ?? [];
    await checkFiles(deps, caller.tenantId, fileIds);
    const id = newVectorStoreId();
    await insertVectorStore(deps.db, id, {
      tenantId: caller.tenantId, name: body.name, embeddingModel: model, metadata: body.metadata ?? null,
      expiresAt: expiresAt(deps, body.expires_in_seconds), apiKeyId: caller.apiKeyId, userId: caller.userId,
    });
    await attach(deps, ctx, caller.tenantId, id, fileIds);
    ctx.body = storeObject((await findVectorStore(deps.db, caller.tenantId, id, deps.clock.now()))!);
  };
}

function listHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    const { tenantId } = callerOf(ctx);
    const query = ctx.query as Record<string, string | string[] | undefined>;
    const page = pageRequest(query);
    const { after } = query;
    if (after !== undefined) {
      if (Array.isArray(after) || page.after) throw validationError([{ path: '/after', message: 'must be given once, and not with cursor' }]);
      page.after = await vectorStorePositionAfter(deps.db, tenantId, after);
    }
    ctx.body = await listVectorStores(deps.db, tenantId, page, deps.clock.now(), storeObject);
  };
}

function fetchHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => void (ctx.body = storeObject(await storeOf(deps, ctx)));
}

function patchHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    const body = validatePatch(await readBody(ctx));
    checkMetadata(body.metadata);
    const { tenantId } = callerOf(ctx);
    const updated = await updateVectorStore(deps.db, tenantId, idOf(ctx), {
      ...(body.name === undefined ? {} : { name: body.name }),
      ...(body.expires_in_seconds === undefined ? {} : { expiresAt: expiresAt(deps, body.expires_in_seconds) }),
      ...(body.metadata === undefined ? {} : { metadata: body.metadata }),
    }, deps.clock.now());
    if (!updated) throw vectorStoreNotFound(idOf(ctx));
    ctx.body = storeObject(updated);
  };
}

function deleteHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    const deleted = await deleteVectorStore(deps.db, callerOf(ctx).tenantId, idOf(ctx), deps.clock.now());
    if (!deleted) throw vectorStoreNotFound(idOf(ctx));
    ctx.body = { id: idOf(ctx), object: 'vector_store.deleted', deleted: true };
  };
}

function attachHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    const body = validateAttach(await readBody(ctx));
    const store = await storeOf(deps, ctx);
    await checkFiles(deps, store.tenantId, body.file_ids);
    if (!(await attach(deps, ctx, store.tenantId, store.id, body.file_ids))) throw vectorStoreNotFound(store.id);
    ctx.body = storeObject((await findVectorStore(deps.db, store.tenantId, store.id, deps.clock.now())) ?? store);
  };
}

function filesHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    const store = await storeOf(deps, ctx);
    ctx.body = { object: 'list', data: (await listStoreFiles(deps.db, store.tenantId, store.id, deps.clock.now())).map(fileObject) };
  };
}

function detachHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    const store = await storeOf(deps, ctx);
    const fileId = (ctx as GatewayContext & { params: { fileId: string } }).params.fileId;
    if (!(await removeStoreFile(deps.db, store.tenantId, store.id, fileId, deps.clock.now()))) {
      throw new GatewayError('NOT_FOUND', `File ${fileId} is not attached to vector store ${store.id}`, { id: fileId });
    }
    ctx.body = { id: fileId, object: 'vector_store.file.deleted', deleted: true };
  };
}

function searchHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    const body = validateSearch(await readBody(ctx));
    const hits = await deps.retrieval.search({
      caller: ctx.state.gw.caller, storeIds: [idOf(ctx)], query: body.query, topK: body.top_k ?? DEFAULT_TOP_K,
      purpose: 'vector-store', unknownStores: 'fail', signal: ctx.state.gw.signal,
      ...(body.threshold === undefined ? {} : { threshold: body.threshold }),
    });
    ctx.body = {
      object: 'list',
      data: hits.map((hit) => ({ file_id: hit.fileId, document_id: hit.documentId, chunk_index: hit.chunkIndex, content: hit.content, score: hit.score })),
    };
  };
}

const base = { kind: 'local', path: ROUTE, capability: 'vector-stores', errorEnvelope: 'canonical' } as const;
const byId = { ...base, routePattern: `${ROUTE}/:id` } as const;
const storeAnswer = (description: string) => ({ '200': { description, schema: storeObjectSchema } });

export const vectorStoresEndpoints: readonly LocalEndpoint[] = [
  {
    ...base, method: 'POST', bodyLimitBytes: BODY_LIMIT, requestSchema: createStoreSchema,
    summary: 'Create a vector store, optionally seeded with gateway file ids (each downloaded, chunked, embedded and stored in the background).',
    description: 'name; file_ids (files of purpose assistants or user_data; an unknown one is 404 NOT_FOUND); embedding_model (default vectorStores.embeddingModel); expires_in_seconds; metadata. The store is in_progress until every file is ingested or skipped (a store without files is completed at once).',
    responses: storeAnswer('The new Vector store.'),
    handler: createHandler,
  },
  {
    ...base, method: 'GET',
    summary: 'The tenant\'s vector stores, oldest first: query limit (1-100, default 20), cursor (or after=<store id>).',
    responses: { '200': { description: 'A page of Vector stores.', schema: storeListSchema } },
    handler: listHandler,
  },
  { ...byId, method: 'GET', summary: 'One vector store, with its file and chunk counts.', responses: storeAnswer('The Vector store.'), handler: fetchHandler },
  {
    ...byId, method: 'PATCH', bodyLimitBytes: BODY_LIMIT, requestSchema: patchStoreSchema,
    summary: 'Rename a store, change its TTL (expires_in_seconds from now; null: none; its chunks follow) or replace its metadata.',
    responses: storeAnswer('The Vector store.'),
    handler: patchHandler,
  },
  {
    ...byId, method: 'DELETE', summary: 'Delete a store and its chunks.',
    responses: { '200': { description: 'The deletion.', schema: deletedSchema('vector_store.deleted') } },
    handler: deleteHandler,
  },
  {
    ...byId, routePattern: `${ROUTE}/:id/files`, method: 'POST', bodyLimitBytes: BODY_LIMIT, requestSchema: attachFilesSchema,
    summary: 'Attach more files ({file_ids}); files attached before are left as they are. Answers the store, in_progress while the new files are ingested.',
    responses: storeAnswer('The Vector store.'),
    handler: attachHandler,
  },
  {
    ...byId, routePattern: `${ROUTE}/:id/files`, method: 'GET',
    summary: 'The store\'s files with their ingestion status, chunk count and the warning of a skipped or failed one.',
    responses: { '200': { description: 'The attached files.', schema: storeFilesSchema } },
    handler: filesHandler,
  },
  {
    ...byId, routePattern: `${ROUTE}/:id/files/:fileId`, method: 'DELETE',
    summary: 'Detach a file from the store and delete its chunks (the file itself stays in /v1/files).',
    responses: { '200': { description: 'The detachment.', schema: deletedSchema('vector_store.file.deleted') } },
    handler: detachHandler,
  },
  {
    ...byId, routePattern: `${ROUTE}/:id/search`, method: 'POST', bodyLimitBytes: BODY_LIMIT, requestSchema: searchSchema,
    summary: 'Cosine-similarity search: query (embedded with the store\'s model), top_k (1-50, default 5), threshold (0-1). Hits ranked by score.',
    responses: { '200': { description: 'The hits, best first.', schema: searchResultSchema } },
    handler: searchHandler,
  },
];
