/**
 * One ajv instance for request bodies and admin inputs. Schemas are written in the subset that is valid both
 * as JSON Schema and as an OpenAPI 3.0 schema object (nullable, no const), so /openapi.json embeds them as is.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { validationError, type ValidationIssue } from './errors.ts';
import type { JsonSchema } from './config/schema.ts';

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
  ajv.addKeyword({ keyword: 'x-entity', schemaType: 'string' });
  ajv.addKeyword({ keyword: 'example' });
  return ajv;
}

const requests = createAjv();

export function compileRequestSchema<T>(schema: JsonSchema): (value: unknown) => T {
  const validate = requests.compile(schema) as ValidateFunction<T>;
  return (value: unknown): T => {
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
    case 'enum':
      return { path: e.instancePath, message: `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` };
    default:
      return { path: e.instancePath, message: e.message ?? 'is invalid' };
  }
}

export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'string') return `string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value)}`;
  return typeof value;
}
