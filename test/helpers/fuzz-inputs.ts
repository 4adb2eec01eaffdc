/**
 * Generated bad input for the fuzz suite, from a seeded PRNG so that a failing run can be repeated with its seed:
 * bodies (wrong types, deep nesting, huge strings, U+0000 and lone surrogates, bad dates, numbers out of range,
 * prototype-pollution keys, invalid UTF-8, empty and truncated bodies), content types, path parameters and
 * query strings. Bodies are built as JSON text, so they can hold what JSON.stringify never writes.
 */
import type { JsonSchema } from '../../core/config/schema.ts';

/** mulberry32: small, fast, and the same sequence for the same seed on every platform. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Random = ReturnType<typeof prng>;
export const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

const nest = (open: string, close: string, depth: number, inner = '1') => open.repeat(depth) + inner + close.repeat(depth);

/** JSON texts of values that have broken parsers, validators and SQL before. */
export const BAD_VALUES: readonly string[] = [
  '"\\u0000"', '"name\\u0000"', '"\\ud800"', '"x\\udc00y"', '"\\ud83d"', '""', '" "',
  `"${'x'.repeat(100_000)}"`, `"${'é'.repeat(20_000)}"`,
  '1e309', '-1e309', '-0', '9007199254740993', '1.5', '-1', '0', '4294967296', '1e-400',
  'null', 'true', '[]', '{}', '[null]', '[[]]', '{"":""}',
  '"0000-01-01T00:00:00Z"', '"9999-12-31T23:59:60Z"', '"2024-02-30T00:00:00Z"', '"+275760-09-13T00:00:00Z"', '"-000001-01-01T00:00:00Z"', '"1969-12-31T23:59:59Z"', '"not a date"',
  nest('[', ']', 5000), nest('{"a":', '}', 5000), nest('[', ']', 129), nest('{"a":', '}', 127, '{}'),
  '{"__proto__":{"polluted":"yes"}}', '{"constructor":{"prototype":{"polluted":"yes"}}}', '["__proto__"]',
  '"../../etc/passwd"', '"..\\\\..\\\\admin"', '"%00"', '"<script>alert(1)</script>"', '"\' OR 1=1 --"',
];

/** Keys that walk into prototypes when code merges objects carelessly. */
export const POLLUTING_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'];

/** A schema-conforming sample: required properties first, enum and format honoured, patterns met by a plain id. */
export function sampleFromSchema(schema: JsonSchema | undefined, random: Random, depth = 0): unknown {
  const s = (schema ?? {}) as Record<string, any>;
  if (depth > 6) return null;
  if (Array.isArray(s.enum)) return pick(random, s.enum);
  if (s.oneOf || s.anyOf) return sampleFromSchema(pick(random, s.oneOf ?? s.anyOf), random, depth + 1);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const properties = (s.properties ?? {}) as Record<string, JsonSchema>;
      for (const [name, property] of Object.entries(properties)) {
        if ((s.required ?? []).includes(name) || random() < 0.4) out[name] = sampleFromSchema(property, random, depth + 1);
      }
      return out;
    }
    case 'array': return s.items ? [sampleFromSchema(s.items, random, depth + 1)] : [];
    case 'integer': return Math.max(s.minimum ?? 1, Math.min(s.maximum ?? 5, 1));
    case 'number': return Math.max(s.minimum ?? 0.5, Math.min(s.maximum ?? 5, 0.5));
    case 'boolean': return random() < 0.5;
    case 'string':
      if (s.format === 'date-time') return new Date(Date.now() + 3_600_000).toISOString();
      return `fuzz-${Math.floor(random() * 1e6)}`;
    default: return null;
  }
}

/** Every JSON pointer-ish path to a value inside `value`, the root excluded. */
function paths(value: unknown, at: Array<string | number> = []): Array<Array<string | number>> {
  if (typeof value !== 'object' || value === null) return [];
  const children: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return children.flatMap(([key, child]) => [[...at, key], ...paths(child, [...at, key])]);
}

const PLACEHOLDER = '"@@FUZZ@@"';

/** `base` with the value at one random path (or a new key) replaced by the JSON text `bad`. */
export function mutate(base: unknown, bad: string, random: Random): string {
  const copy = structuredClone(base) as Record<string, unknown>;
  const targets = paths(copy);
  if (targets.length === 0 || typeof copy !== 'object' || copy === null || random() < 0.15) {
    const key = random() < 0.5 ? pick(random, POLLUTING_KEYS) : `extra${Math.floor(random() * 100)}`;
    const object = typeof copy === 'object' && copy !== null && !Array.isArray(copy) ? copy : {};
    const rest = JSON.stringify(object).slice(1);
    return `{${JSON.stringify(key)}:${bad}${rest === '}' ? '' : ','}${rest}`;
  }
  const path = pick(random, targets);
  let parent: any = copy;
  for (const key of path.slice(0, -1)) parent = parent[key];
  parent[path.at(-1)!] = PLACEHOLDER.slice(1, -1);
  return JSON.stringify(copy).replace(PLACEHOLDER, () => bad);
}

export interface FuzzBody {
  kind: string;
  contentType: string | undefined;
  body: Buffer | string | undefined;
}

const JSON_TYPE = 'application/json';

/** The body kinds every route gets once per round, each with its random details. */
export const BODY_KINDS = [
  'sample', 'bad-value', 'bad-value', 'polluting-key', 'deep-body', 'scalar-body', 'invalid-utf8', 'empty',
  'truncated', 'wrong-type', 'huge', 'duplicate-keys',
] as const;

export function fuzzBody(kind: (typeof BODY_KINDS)[number], base: unknown, random: Random): FuzzBody {
  const text = JSON.stringify(base);
  switch (kind) {
    case 'sample': return { kind, contentType: JSON_TYPE, body: text };
    case 'bad-value': return { kind, contentType: JSON_TYPE, body: mutate(base, pick(random, BAD_VALUES), random) };
    case 'polluting-key': return { kind, contentType: JSON_TYPE, body: mutate(base, '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}', random) };
    case 'deep-body': return { kind, contentType: JSON_TYPE, body: pick(random, [nest('[', ']', 100_000), nest('{"a":', '}', 20_000), nest('[', ']', 129)]) };
    case 'scalar-body': return { kind, contentType: JSON_TYPE, body: pick(random, ['null', '0', '"text"', '[]', 'true', '1e309', '[' + text + ']']) };
    case 'invalid-utf8': {
      const [head, tail] = [text.slice(0, Math.max(1, text.length - 2)), text.slice(Math.max(1, text.length - 2))];
      const inside = mutate(base, '"@@BYTES@@"', random);
      const at = inside.indexOf('@@BYTES@@');
      const bytes = Buffer.from(pick(random, [[0xc3, 0x28], [0xff, 0xfe], [0xed, 0xa0, 0x80], [0xf0, 0x28, 0x8c, 0x28], [0xc0, 0xaf]]));
      return {
        kind, contentType: pick(random, [JSON_TYPE, 'application/json; charset=utf-8']),
        body: at < 0 ? Buffer.concat([Buffer.from(head), bytes, Buffer.from(tail)]) : Buffer.concat([Buffer.from(inside.slice(0, at)), bytes, Buffer.from(inside.slice(at + 9))]),
      };
    }
    case 'empty': return { kind, contentType: pick(random, [JSON_TYPE, undefined]), body: pick(random, ['', undefined]) };
    case 'truncated': return { kind, contentType: JSON_TYPE, body: text.slice(0, Math.floor(random() * text.length)) };
    case 'wrong-type': return {
      kind,
      contentType: pick(random, ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/json; charset=latin1', 'application/json; charset=utf-16', '*/*', 'application/', ';;']),
      body: pick(random, [text, 'a=1&b=2', '--x\r\ncontent-disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n', '<a/>']),
    };
    case 'huge': return { kind, contentType: JSON_TYPE, body: mutate(base, `"${'h'.repeat(pick(random, [300_000, 1_100_000]))}"`, random) };
    case 'duplicate-keys': return { kind, contentType: JSON_TYPE, body: text.replace(/^\{/, '{"model":1,"model":"x",').replace(/,\}$/, '}') };
  }
}

/** Values for a path parameter, percent-encoded as they go on the wire. */
export const PARAM_VALUES: readonly string[] = [
  'key_00000000-0000-0000-0000-000000000000', 'unknown', '%00', 'a%00b', 'x'.repeat(5000), '%E0%A4%A', '%ED%A0%80',
  '%F0%9F%98%80', '..', '%2e%2e', '..%2F..%2Fadmin', '%5C..%5Cadmin', '__proto__', 'constructor', '%25', '%20', 'a;b',
  '1e309', '-1', '0', 'default',
];

/** Query strings for any route; list routes read limit and cursor, /v1/usage its window and groups. */
export const QUERIES: readonly string[] = [
  '', '?limit=0', '?limit=101', '?limit=abc', '?limit=1e309', '?limit=1&limit=2', '?cursor=garbage', '?cursor=%00',
  `?cursor=${'c'.repeat(3000)}`, '?tenantId=%00', '?tenantId=__proto__', '?scope=key&scopeId=%00',
  '?from=0000-01-01T00:00:00Z', '?from=-1e20&to=1e20', '?from=2030-01-01&to=2020-01-01', '?to=9999-12-31T23:59:60Z',
  '?group_by=__proto__', '?group_by=model,model,day,key,provider', '?%E0%A4%A=1', '?a[b]=c&a[c]=d', '?__proto__[x]=1',
  `?from=${'9'.repeat(400)}`,
];
