/** The API-key creation fields of the spec (plus tenantId, which the spec leaves to the admin side). */
import type { JsonSchema } from '../json-schema.ts';
import { CAPABILITIES } from '../config/capabilities.ts';

const positiveInt: JsonSchema = { type: 'integer', minimum: 1 };
const keyName: JsonSchema = { type: 'string', minLength: 1, maxLength: 200 };

/** The key fields an update may change too (see updateApiKeySchema). */
const changeableKeyFields: Record<string, JsonSchema> = {
  scopes: {
    type: 'object', additionalProperties: false,
    properties: {
      capabilities: { type: 'array', items: { type: 'string', enum: [...CAPABILITIES] }, uniqueItems: true, description: 'Default ["chat"].' },
      providerIds: { type: 'array', items: { type: 'string' }, description: 'Stored, not enforced.' },
      modelIds: { type: 'array', items: { type: 'string' }, description: 'Stored, not enforced.' },
    },
  },
  rateLimits: {
    type: 'object', additionalProperties: false,
    properties: { requestsPerMinute: positiveInt, requestsPerDay: positiveInt, tokensPerDay: positiveInt },
  },
  expiresAt: { type: 'string', format: 'date-time', description: 'ISO 8601; after it the key is expired.' },
  allowedIps: { type: 'array', items: { type: 'string', minLength: 1 }, description: 'Addresses and CIDR ranges; empty means unrestricted.' },
  metadata: { type: 'object' },
};

export const createApiKeySchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['name'],
  properties: {
    name: keyName,
    tenantId: { type: 'string', minLength: 1, maxLength: 200, description: 'Tenant (deployment) the key belongs to; default "default".' },
    organizationId: { type: 'string', minLength: 1, maxLength: 200, description: 'Organization of the tenant the key belongs to; its policy applies.' },
    departmentId: { type: 'string', minLength: 1, maxLength: 200, description: 'Department of that organization; its policy narrows the organization\'s.' },
    ...changeableKeyFields,
  },
};

/**
 * The fields `PATCH /admin/v1/keys/:id` may change, validated as strictly as at creation. Ownership (tenant,
 * organization, department) stays: a key moves by revoking it and creating another. null clears rateLimits and
 * expiresAt.
 */
export const updateApiKeySchema: JsonSchema = {
  type: 'object', additionalProperties: false, minProperties: 1,
  properties: {
    name: keyName,
    ...changeableKeyFields,
    scopes: { ...changeableKeyFields.scopes, description: 'Each list given replaces the stored one; lists not given stay.' },
    rateLimits: { ...changeableKeyFields.rateLimits, nullable: true, description: 'Replaces the key\'s limits as a whole; null removes them.' },
    expiresAt: { ...changeableKeyFields.expiresAt, nullable: true, description: 'ISO 8601; null: never expires. A later expiry reactivates a key that had expired.' },
  },
};

export const apiKeyRecordSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'object', 'name', 'tenantId', 'prefix', 'scopes', 'allowedIps', 'status', 'createdAt'],
  properties: {
    id: { type: 'string' },
    object: { type: 'string', enum: ['api_key'] },
    name: { type: 'string' },
    tenantId: { type: 'string' },
    organizationId: { type: 'string', nullable: true },
    departmentId: { type: 'string', nullable: true },
    prefix: { type: 'string', description: 'The first characters of the key, to recognise it.' },
    scopes: {
      type: 'object',
      properties: {
        capabilities: { type: 'array', items: { type: 'string' } },
        providerIds: { type: 'array', items: { type: 'string' } },
        modelIds: { type: 'array', items: { type: 'string' } },
      },
    },
    rateLimits: { type: 'object', nullable: true },
    expiresAt: { type: 'string', nullable: true },
    allowedIps: { type: 'array', items: { type: 'string' } },
    metadata: { type: 'object', nullable: true },
    status: { type: 'string', enum: ['active', 'expired', 'revoked'] },
    createdAt: { type: 'string' },
    revokedAt: { type: 'string', nullable: true },
    lastUsedAt: { type: 'string', nullable: true, description: 'Recorded in batches: it may lag real use by auth.lastUsedFlushIntervalMs.' },
    key: { type: 'string', description: 'The plaintext key: present only in the creation response.' },
  },
};

const name: JsonSchema = { type: 'string', minLength: 1, maxLength: 200 };

export const createTenantSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['id', 'name'],
  properties: {
    id: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,62}$', description: 'Lower-case letters, digits, _ and -; up to 63 characters.' },
    name,
  },
};

export const createOrganizationSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['name'],
  properties: { name, tenantId: { ...name, description: 'Default: the admin\'s own tenant, else "default".' } },
};

export const createDepartmentSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['name', 'organizationId'],
  properties: { name, organizationId: name },
};

export const jwtRevocationSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['jti'],
  properties: {
    jti: { type: 'string', minLength: 1, maxLength: 256, description: 'The token id to refuse from now on.' },
    expiresAt: { type: 'string', format: 'date-time', description: 'The token\'s own expiry; the entry can be forgotten after it. Default: kept for good.' },
  },
};
