/** ajv errors on pipelines.yaml -> messages an operator can act on, positioned in the file. */
import type { ErrorObject } from 'ajv';
import { ENTITY_KEYWORD } from './schema.ts';
import type { ConfigIssue, PositionedDocument } from './document.ts';
import { typeName } from '../validation.ts';

function knownNames(schema: Record<string, unknown> | undefined): string[] {
  if (!schema) return [];
  if (Array.isArray(schema.enum)) return schema.enum.map(String);
  return Object.keys((schema.properties as object | undefined) ?? {});
}

function list(names: string[]): string {
  return names.length > 0 ? names.join(', ') : 'none';
}

export function configIssues(errors: ErrorObject[], doc: PositionedDocument): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    if (e.keyword === 'if') continue;
    const issue = toIssue(e, doc);
    const id = `${issue.pointer} ${issue.message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    issues.push(issue);
  }
  return issues;
}

function toIssue(e: ErrorObject, doc: PositionedDocument): ConfigIssue {
  const p = e.params as Record<string, unknown>;
  const parent = e.parentSchema as Record<string, unknown> | undefined;
  const entity = parent?.[ENTITY_KEYWORD] as string | undefined;
  const at = (pointer: string, message: string, key?: string): ConfigIssue => ({ pointer, message, ...doc.locate(key === undefined ? pointer : e.instancePath, key) });

  switch (e.keyword) {
    case 'additionalProperties': {
      const name = String(p.additionalProperty);
      const pointer = `${e.instancePath}/${name}`;
      if (entity) return at(e.instancePath, `unknown ${entity} "${name}" (known: ${list(knownNames(parent))})`, name);
      return at(pointer, `unknown property "${name}" (expected one of: ${list(knownNames(parent))})`, name);
    }
    case 'enum':
      if (entity) return at(e.instancePath, `unknown ${entity} "${String(e.data)}" (known: ${list(knownNames(parent))})`);
      return at(e.instancePath, `expected one of ${list(knownNames(parent).map((v) => JSON.stringify(v)))}, got ${typeName(e.data)}`);
    case 'required':
      return at(e.instancePath, `missing required property "${String(p.missingProperty)}"`);
    case 'type':
      return at(e.instancePath, `expected ${String(p.type)}, got ${typeName(e.data)}`);
    case 'minProperties':
    case 'maxProperties':
      if (entity) return at(e.instancePath, `a ${entity} entry is a name, or a one-key map {name: {config}}`);
      return at(e.instancePath, e.message ?? 'invalid');
    case 'pattern':
      return at(e.instancePath, `must match ${String(p.pattern)}, got ${typeName(e.data)}`);
    default:
      return at(e.instancePath, `${e.message ?? 'invalid'}${e.data !== undefined && typeof e.data !== 'object' ? `, got ${typeName(e.data)}` : ''}`);
  }
}
