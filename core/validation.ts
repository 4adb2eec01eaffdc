/**
 * One ajv instance for request bodies and admin inputs. Schemas are written in the subset that is valid both
 * as JSON Schema and as an OpenAPI 3.0 schema object (nullable, no const), so /openapi.json embeds them as is.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { validationError, type ValidationIssue } from './errors.ts';
import type { JsonSchema } from './json-schema.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export function createAjv(options: { useDefaults?: boolean; allErrors?: boolean } = {}): Ajv {
  const ajv = new Ajv({
    allErrors: options.allErrors ?? true,
    useDefaults: options.useDefaults ?? false,
    strict: true,
    strictRequired: false,
    allowUnionTypes: true,
    verbose: true,
  });
  addFormats(ajv);
  boundDateTimes(ajv);
  ajv.addKeyword({ keyword: 'x-entity', schemaType: 'string' });
  ajv.addKeyword({ keyword: 'example' });
  return ajv;
}

/** A request id the gateway accepts from a caller (X-Request-ID) and lets a caller name (/image-progress). */
export const SANE_REQUEST_ID = /^[A-Za-z0-9._:@\/+=-]{1,128}$/;

/** 1970-01-01T00:00:00Z up to (not including) the year 10000, in ms since the epoch. */
export const DATE_TIME_RANGE = { min: 0, max: Date.UTC(10000, 0, 1) } as const;

/**
 * RFC 3339 alone admits year 0000 (which Postgres refuses) and leap seconds (which Date cannot parse): a
 * date-time must also be an instant in 1970..9999 that Date reads, so every layer after validation agrees on it.
 */
function boundDateTimes(ajv: Ajv): void {
  const rfc3339 = ajv.formats['date-time'] as { validate: (value: string) => boolean } | undefined;
  if (!rfc3339 || typeof rfc3339.validate !== 'function') throw new Error('ajv-formats did not define date-time');
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (value: string) => {
      if (!rfc3339.validate(value)) return false;
      const ms = Date.parse(value);
      return ms >= DATE_TIME_RANGE.min && ms < DATE_TIME_RANGE.max;
    },
  });
}

const requests = createAjv();

const declared: JsonSchema[] = [];

/** Every schema given to compileRequestSchema so far (by the modules loaded), for the test that compiles them all. */
export function declaredRequestSchemas(): readonly JsonSchema[] {
  return declared;
}

/**
 * Compiled on first use: the gateway declares some forty request schemas and a start compiled them all (about a
 * third of a second, and their code stays in memory) though most endpoints never serve a request. Their validity
 * is checked by the tests, which compile every one of them (test/contract/request-schemas.test.ts).
 */
export function compileRequestSchema<T>(schema: JsonSchema): (value: unknown) => T {
  declared.push(schema);
  let validate: ValidateFunction<T> | undefined;
  return (value: unknown): T => {
    validate ??= requests.compile(schema) as ValidateFunction<T>;
    if (validate(value)) return value;
    throw validationError(toIssues(validate.errors ?? []));
  };
}

export function toIssues(errors: ErrorObject[]): ValidationIssue[] {
  const seen = new Set<string>();
  const issues: ValidationIssue[] = [];
  for (const e of errors) {
    if (e.keyword === 'if') continue;
    const issue = describe(e);
    const key = issue.path + issue.message;
    if (!seen.has(key)) {
      seen.add(key);
      issues.push(issue);
    }
  }
  return issues;
}

function describe(e: ErrorObject): ValidationIssue {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return { path: `${e.instancePath}/${String(p.missingProperty)}`, message: 'is required' };
    case 'additionalProperties':
      return { path: `${e.instancePath}/${String(p.additionalProperty)}`, message: 'is not a known property' };
    case 'type':
      return { path: e.instancePath, message: `must be ${String(p.type)}, got ${typeName(e.data)}` };
    case 'format':
      if (p.format === 'date-time') return { path: e.instancePath, message: 'must be an RFC 3339 date-time (2030-01-31T12:00:00Z) from 1970 to 9999' };
      return { path: e.instancePath, message: e.message ?? 'is invalid' };
    case 'enum':
      return { path: e.instancePath, message: `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` };
    default:
      return { path: e.instancePath, message: e.message ?? 'is invalid' };
  }
}

/**
 * Text Postgres cannot store: U+0000 (text and jsonb refuse it) and lone UTF-16 surrogates (jsonb refuses their
 * \uXXXX escapes; text would store them as U+FFFD, silently changed). Input that reaches SQL is checked first,
 * so the caller gets a 400 and not a database failure.
 */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * JSON pointers of the strings (values and keys) under `value` that hold unstorable text. Bodies reach this
 * after the body reader's depth limit, so the recursion stays shallow.
 */
export function unstorablePointers(value: unknown, at = ''): string[] {
  if (typeof value === 'string') return UNSTORABLE.test(value) ? [at] : [];
  if (Array.isArray(value)) return value.flatMap((item, i) => unstorablePointers(item, `${at}/${i}`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, item]) => {
    const pointer = `${at}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    return UNSTORABLE.test(key) ? [pointer] : unstorablePointers(item, pointer);
  });
}

/** 400 VALIDATION_ERROR when any string under `value` holds unstorable text; `what` names where it came from. */
export function refuseUnstorableText(value: unknown, what: string): void {
  const pointers = unstorablePointers(value);
  if (pointers.length === 0) return;
  const message = 'must not contain the character U+0000 or a lone surrogate';
  throw validationError(pointers.map((path) => ({ path, message })), `${what} ${message} (at ${pointers.slice(0, 5).join(', ')})`);
}

export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'string') return `string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value)}`;
  return typeof value;
}
