/** The request and answer shapes of /v1/vector_stores: validated with these, and documented in /openapi.json. */
import { listSchema, pageSchema, type JsonSchema } from '../json-schema.ts';

/** The spec's top_k range; a store created with more files than this is refused (attach more later). */
export const MAX_TOP_K = 50;
export const DEFAULT_TOP_K = 5;
export const MAX_FILES_PER_CALL = 500;
/** 10 years: longer is no expiry in practice, and a typo of one. */
const MAX_TTL_SECONDS = 315_360_000;

const fileIds: JsonSchema = {
  type: 'array', maxItems: MAX_FILES_PER_CALL, uniqueItems: true,
  items: { type: 'string', pattern: '^file-[0-9a-f-]{36}$' },
  description: `Gateway file ids (file-<uuid>, at most ${MAX_FILES_PER_CALL}); each is downloaded from its provider, its text extracted, chunked and embedded. Purposes assistants and user_data only.`,
};
const metadata: JsonSchema = { type: 'object', nullable: true, maxProperties: 16, description: 'Up to 16 keys, at most 16 KiB as JSON.' };
const expires: JsonSchema = {
  type: 'integer', minimum: 1, maximum: MAX_TTL_SECONDS, nullable: true,
  description: 'Seconds from now after which the store and its chunks are gone (null: never). Counted from the request, also on PATCH.',
};

export const createStoreSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 256 },
    file_ids: fileIds,
    embedding_model: { type: 'string', minLength: 1, description: 'A model id with an embeddings target; default vectorStores.embeddingModel of pipelines.yaml.' },
    expires_in_seconds: expires,
    metadata,
  },
};

export const patchStoreSchema: JsonSchema = {
  type: 'object', additionalProperties: false, minProperties: 1,
  properties: { name: { type: 'string', minLength: 1, maxLength: 256 }, expires_in_seconds: expires, metadata },
};

export const attachFilesSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['file_ids'],
  properties: { file_ids: { ...fileIds, minItems: 1 } },
};

export const searchSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['query'],
  properties: {
    query: { type: 'string', minLength: 1, maxLength: 32_768, description: 'Embedded with the store\'s embedding model.' },
    top_k: { type: 'integer', minimum: 1, maximum: MAX_TOP_K, default: DEFAULT_TOP_K },
    threshold: { type: 'number', minimum: 0, maximum: 1, description: 'Minimum cosine similarity; lower chunks are dropped.' },
  },
};

export const storeObjectSchema: JsonSchema = {
  type: 'object', required: ['id', 'object', 'name', 'embedding_model', 'file_counts', 'chunk_count', 'status', 'created_at', 'expires_at', 'metadata'],
  properties: {
    id: { type: 'string', description: 'vs-<uuid>' },
    object: { type: 'string', enum: ['vector_store'] },
    name: { type: 'string' },
    embedding_model: { type: 'string' },
    file_counts: {
      type: 'object', required: ['total'],
      properties: {
        total: { type: 'integer' },
        in_progress: { type: 'integer' },
        completed: { type: 'integer' },
        skipped: { type: 'integer', description: 'Files whose bytes could not be downloaded or read: each has a warning (GET .../files).' },
        failed: { type: 'integer' },
      },
    },
    chunk_count: { type: 'integer' },
    status: { type: 'string', enum: ['in_progress', 'completed'] },
    created_at: { type: 'integer', description: 'Unix seconds.' },
    expires_at: { type: 'integer', nullable: true, description: 'Unix seconds, or null for a store without TTL.' },
    metadata: { type: 'object', nullable: true },
  },
};

export const storeListSchema: JsonSchema = pageSchema(storeObjectSchema);

export const storeFilesSchema: JsonSchema = listSchema({
  type: 'object', required: ['file_id', 'status', 'chunk_count', 'warning'],
  properties: {
    file_id: { type: 'string' },
    status: { type: 'string', enum: ['in_progress', 'completed', 'skipped', 'failed'] },
    chunk_count: { type: 'integer' },
    warning: { type: 'string', nullable: true },
  },
});

export const searchResultSchema: JsonSchema = listSchema({
  type: 'object', required: ['file_id', 'document_id', 'chunk_index', 'content', 'score'],
  properties: {
    file_id: { type: 'string' }, document_id: { type: 'string' }, chunk_index: { type: 'integer' },
    content: { type: 'string' }, score: { type: 'number', description: 'Cosine similarity to the query.' },
  },
});
