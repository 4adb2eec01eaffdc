/** The shapes /openapi.json documents for /v1/files. */
import { pageSchema, type JsonSchema } from '../json-schema.ts';
import { FILE_PURPOSES } from '../dispatch/provider-files.ts';

export const fileObjectSchema: JsonSchema = {
  type: 'object', required: ['id', 'object', 'bytes', 'created_at', 'expires_at', 'filename', 'purpose', 'status', 'provider'],
  properties: {
    id: { type: 'string', description: 'The gateway file id, file-<uuid>.' },
    object: { type: 'string', enum: ['file'] },
    bytes: { type: 'integer', description: 'The bytes the gateway streamed to the provider.' },
    created_at: { type: 'integer', description: 'Unix seconds.' },
    expires_at: { type: 'integer', nullable: true, description: 'Unix seconds: the earlier of expires_in_seconds and the provider\'s own expiry; null when neither applies.' },
    filename: { type: 'string' },
    purpose: { type: 'string', enum: [...FILE_PURPOSES, 'batch_output'], description: 'batch_output: a batch\'s results, registered by the gateway when the batch ended.' },
    status: { type: 'string', enum: ['processed'] },
    provider: { type: 'string', description: 'The provider slug the file was uploaded to.' },
    metadata: { type: 'object', nullable: true },
  },
};

export const fileListSchema: JsonSchema = pageSchema(fileObjectSchema);

/** The JSON form of an upload (the multipart form has the same fields, with the file as the part `file`). */
export const fileUploadSchema: JsonSchema = {
  type: 'object', required: ['provider', 'purpose', 'filename', 'mime_type', 'content_base64'],
  properties: {
    provider: { type: 'string', description: 'A provider slug whose provider has a files API.' },
    purpose: { type: 'string', enum: [...FILE_PURPOSES] },
    filename: { type: 'string' },
    mime_type: { type: 'string' },
    content_base64: { type: 'string', description: 'The file\'s bytes, base64; the whole body is at most 50 MiB.' },
    expires_in_seconds: { type: 'integer', minimum: 1, description: 'The registry entry\'s TTL; default: the provider\'s own.' },
    metadata: { type: 'object' },
  },
};
