/** Budget bodies of the admin API and the records it answers with; the same schemas validate and document. */
import type { JsonSchema } from '../../core/json-schema.ts';
import { BUDGET_PERIODS, BUDGET_SCOPES } from './periods.ts';

/** A billion dollars: in micro-dollars still far inside the safe-integer range. */
export const MAX_LIMIT_USD = 1_000_000_000;

const limitUsd: JsonSchema = {
  type: 'number', minimum: 0, maximum: MAX_LIMIT_USD,
  description: 'The limit in USD, at most 6 decimal places (whole micro-dollars). 0 refuses every priced request.',
};

export const createBudgetSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['scope', 'period', 'limitUsd'],
  properties: {
    tenantId: {
      type: 'string', minLength: 1, maxLength: 200,
      description: 'The tenant. For a deployment budget: default the admin\'s own tenant, else "default". For other scopes it is the tenant of the organization, department or key; when given it must match.',
    },
    scope: { type: 'string', enum: [...BUDGET_SCOPES], description: 'What the budget caps: the whole deployment (tenant), an organization, a department or one API key.' },
    scopeId: {
      type: 'string', minLength: 1, maxLength: 200,
      description: 'The organization, department or API key id; absent for scope deployment.',
    },
    period: { type: 'string', enum: [...BUDGET_PERIODS], description: 'daily (from midnight UTC), monthly (from the first of the month, UTC) or total (no reset).' },
    limitUsd,
  },
};

export const updateBudgetSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['limitUsd'],
  properties: { limitUsd },
};

export const budgetRecordSchema: JsonSchema = {
  type: 'object', required: ['id', 'object', 'tenantId', 'scope', 'scopeId', 'period', 'limitUsd', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string' },
    object: { type: 'string', enum: ['budget'] },
    tenantId: { type: 'string' },
    scope: { type: 'string', enum: [...BUDGET_SCOPES] },
    scopeId: { type: 'string', nullable: true, description: 'Null for scope deployment.' },
    period: { type: 'string', enum: [...BUDGET_PERIODS] },
    limitUsd: { type: 'number' },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
    spentUsd: { type: 'number', description: 'Fetch and update only: spent or reserved by requests in flight, this period.' },
    remainingUsd: { type: 'number', description: 'Fetch and update only: limitUsd - spentUsd, never below 0.' },
    periodStart: { type: 'string', nullable: true, description: 'Fetch and update only: when the current period began (ISO 8601, UTC); null for total.' },
    resetsAt: { type: 'string', nullable: true, description: 'Fetch and update only: when the next period begins (ISO 8601, UTC); null for total.' },
  },
};

export const deletedBudgetSchema: JsonSchema = {
  type: 'object', required: ['id', 'object', 'deleted'],
  properties: { id: { type: 'string' }, object: { type: 'string', enum: ['budget'] }, deleted: { type: 'boolean' } },
};
