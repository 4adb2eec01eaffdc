/**
 * /v1/files (capability `files`): uploads to a provider's files API, recorded in the deployment-wide registry
 * (core/store/files.ts) under a gateway id `file-<uuid>` that any key of the deployment can list, read, delete
 * and name in later requests. Reading the upload: core/api/files-upload.ts; the provider I/O:
 * core/dispatch/files-call.ts.
 */
import { deleteProviderFile, filesTranslatorFor, uploadFile, type Uploaded } from '../dispatch/files-call.ts';
import { passthroughTargets, type PassthroughEntry } from '../dispatch/passthrough.ts';
import { validationError } from '../errors.ts';
import { deletedSchema } from '../json-schema.ts';
import type { LocalEndpoint, LocalEndpointDeps } from '../ingress/endpoint.ts';
import type { GatewayContext, GatewayMiddleware } from '../pipeline/context.ts';
import { fileNotFound, findFile, insertFile, listFiles, newFileId, positionAfter, removeFile, type FileRecord } from '../store/files.ts';
import { pageRequest } from '../store/pagination.ts';
import { fileListSchema, fileObjectSchema, fileUploadSchema } from './files-schemas.ts';
import { FILES_ROUTE, JSON_UPLOAD_LIMIT, receiveJson, receiveMultipart, type BeginUpload } from './files-upload.ts';

const seconds = (ms: number) => Math.floor(ms / 1000);

export function fileObject(file: FileRecord) {
  return {
    id: file.id, object: 'file' as const, bytes: file.bytes, created_at: seconds(file.createdAt),
    expires_at: file.expiresAt === null ? null : seconds(file.expiresAt), filename: file.filename, purpose: file.purpose,
    status: file.status, provider: file.provider, metadata: file.metadata,
  };
}

/** One provider table per gateway: the configured, enabled provider blocks, as the passthrough reaches them. */
const tables = new WeakMap<LocalEndpointDeps, Map<string, PassthroughEntry>>();

function targetOf(deps: LocalEndpointDeps, slug: string): PassthroughEntry | undefined {
  let targets = tables.get(deps);
  if (!targets) tables.set(deps, (targets = passthroughTargets(deps.config, deps.providers)));
  return targets.get(slug);
}

function callerOf(ctx: GatewayContext) {
  const caller = ctx.state.gw.caller;
  return {
    tenantId: caller?.tenantId ?? 'default',
    apiKeyId: caller?.kind === 'api_key' ? caller.id : null,
    userId: caller?.kind === 'jwt' ? caller.id : null,
  };
}

/** Best effort: a provider file no registry entry names is deleted; a failure leaves it to the provider's TTL. */
function discard(deps: LocalEndpointDeps, provider: string, uploaded: Uploaded): void {
  const entry = targetOf(deps, provider);
  if (!entry) return;
  deleteProviderFile(deps, entry.provider, entry.target, uploaded.id, AbortSignal.timeout(30_000)).catch(() => {});
}

function uploadHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    let provider = '';
    const begin: BeginUpload = async (fields, file, source, signal) => {
      const entry = targetOf(deps, fields.provider);
      if (!entry) throw validationError([{ path: '/provider', message: `no provider "${fields.provider}" is configured and enabled` }]);
      filesTranslatorFor(entry.provider);
      provider = fields.provider;
      return uploadFile(deps, entry.provider, entry.target, { filename: file.filename, mimeType: file.mimeType, purpose: fields.purpose, ...(file.bytes === undefined ? {} : { bytes: file.bytes }) }, source, signal);
    };
    const received = ctx.is('multipart/form-data')
      ? await receiveMultipart(ctx, begin, (uploaded) => discard(deps, provider, uploaded))
      : await receiveJson(ctx, begin);
    const { fields, file, uploaded } = received;
    const now = deps.clock.now();
    const requested = fields.expiresInSeconds === null ? null : now + fields.expiresInSeconds * 1000;
    const upstreamExpiry = uploaded.expiresAt ?? null;
    // An entry never outlives the provider's file it names.
    const expiresAt = requested === null ? upstreamExpiry : upstreamExpiry === null ? requested : Math.min(requested, upstreamExpiry);
    const caller = callerOf(ctx);
    let record: FileRecord;
    try {
      record = await insertFile(deps.db, newFileId(), {
        tenantId: caller.tenantId, provider: fields.provider, providerFileId: uploaded.id, filename: file.filename,
        purpose: fields.purpose, bytes: uploaded.streamedBytes, mimeType: file.mimeType, metadata: fields.metadata, expiresAt,
        apiKeyId: caller.apiKeyId, userId: caller.userId,
      });
    } catch (err) {
      discard(deps, fields.provider, uploaded);
      throw err;
    }
    ctx.body = fileObject(record);
  };
}

function listHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    const { tenantId } = callerOf(ctx);
    const query = ctx.query as Record<string, string | string[] | undefined>;
    const page = pageRequest(query);
    const { purpose, after } = query;
    if (Array.isArray(purpose)) throw validationError([{ path: '/purpose', message: 'must be given once' }]);
    if (after !== undefined) {
      if (Array.isArray(after) || page.after) throw validationError([{ path: '/after', message: 'must be given once, and not with cursor' }]);
      page.after = await positionAfter(deps.db, tenantId, after);
    }
    ctx.body = await listFiles(deps.db, tenantId, purpose, page, deps.clock.now(), fileObject);
  };
}

function fetchHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    const id = (ctx as GatewayContext & { params: { id: string } }).params.id;
    const file = await findFile(deps.db, callerOf(ctx).tenantId, id, deps.clock.now());
    if (!file) throw fileNotFound(id);
    ctx.body = fileObject(file);
  };
}

function deleteHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    const id = (ctx as GatewayContext & { params: { id: string } }).params.id;
    const { tenantId } = callerOf(ctx);
    const file = await findFile(deps.db, tenantId, id, deps.clock.now());
    if (!file) throw fileNotFound(id);
    const entry = targetOf(deps, file.provider);
    // A provider no longer configured cannot be reached: its entry goes, its file stays to the provider's TTL.
    if (entry) await deleteProviderFile(deps, entry.provider, entry.target, file.providerFileId, ctx.state.gw.signal);
    await removeFile(deps.db, tenantId, id);
    ctx.body = { id, object: 'file', deleted: true };
  };
}

const base = { kind: 'local', path: FILES_ROUTE, capability: 'files', errorEnvelope: 'canonical' } as const;
const byId = { ...base, routePattern: `${FILES_ROUTE}/:id` } as const;

export const filesEndpoints: readonly LocalEndpoint[] = [
  {
    ...base, method: 'POST',
    summary: 'Upload a file to a provider\'s files API and register it under a gateway file id.',
    description: 'multipart/form-data with the parts provider and purpose, then file (up to 512 MiB, streamed to the provider as it arrives; provider and purpose must come before the file part), and optionally expires_in_seconds and metadata (JSON text, or metadata[key] parts); or JSON with content_base64, filename, mime_type (body up to 50 MiB). One file per upload. 413 PAYLOAD_TOO_LARGE past the limits, 400 CAPABILITY_NOT_SUPPORTED for a provider without a files API.',
    bodyLimitBytes: JSON_UPLOAD_LIMIT,
    requestSchema: fileUploadSchema,
    responses: { '200': { description: 'The registered File.', schema: fileObjectSchema } },
    handler: uploadHandler,
  },
  {
    ...base, method: 'GET',
    summary: 'The deployment\'s files, oldest first: query purpose, limit (1-100, default 20), cursor (or after=<file id>).',
    responses: { '200': { description: 'A page of File objects.', schema: fileListSchema } },
    handler: listHandler,
  },
  {
    ...byId, method: 'GET',
    summary: 'One file of the deployment.',
    responses: { '200': { description: 'The File.', schema: fileObjectSchema } },
    handler: fetchHandler,
  },
  {
    ...byId, method: 'DELETE',
    summary: 'Delete a file from the provider and from the registry (a file the provider no longer has is still removed from the registry).',
    responses: { '200': { description: 'The deletion.', schema: deletedSchema('file') } },
    handler: deleteHandler,
  },
];
