/**
 * The documentation's tables, rendered from the registries: the plugins (their definitions), a plugin's config
 * (its JSON schema), the data-plane routes (core/api/endpoints.ts and the plugins' endpoints) and the error codes
 * (core/errors.ts, core/error-meanings.ts and the plugins' declared codes). core/cli/docs-command.ts places them.
 */
import { adminRoutes } from '../api/admin/routes.ts';
import { endpoints } from '../api/endpoints.ts';
import { ERROR_MEANINGS } from '../error-meanings.ts';
import { ERROR_CATALOGUE } from '../errors.ts';
import type { JsonSchema } from '../json-schema.ts';
import type { AnyPluginDefinition } from '../pipeline/plugin.ts';
import type { AdminRouteDescription, EndpointDescription } from '../pipeline/routes.ts';

/**
 * One line of markdown table cell: pipes escaped, line breaks folded, and outside code spans `<` written as an
 * entity (a description's `vs-<uuid>` would otherwise be read as an HTML tag and vanish).
 */
const cell = (text: string): string => text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|')
  .split(/(`[^`]*`)/).map((part) => (part.startsWith('`') ? part : part.replace(/</g, '&lt;'))).join('');
const code = (text: string): string => `\`${text}\``;
const firstSentence = (text: string): string => text.match(/^.*?[.!?](?=\s|$)/)?.[0] ?? text;
const properties = (schema: JsonSchema): Record<string, JsonSchema> => (schema.properties ?? {}) as Record<string, JsonSchema>;

/** README: each built-in plugin, what it does, and its config keys. */
export function renderPluginList(plugins: readonly AnyPluginDefinition[]): string {
  return [
    '| plugin | what it does | config keys |',
    '|---|---|---|',
    ...plugins.map((p) => `| ${code(p.name)} | ${cell(p.description)} | ${Object.keys(properties(p.configSchema)).map(code).join(', ') || 'none'} |`),
  ].join('\n');
}

const adminPath = (path: string) => `/admin/v1${path}`;

/**
 * docs/pipelines.md: each plugin's facts, routes, commands and config keys, and its first sentence; then the
 * implicit `default` pipeline of a file that declares none.
 */
export function renderPluginReference(plugins: readonly AnyPluginDefinition[], defaultPipeline: readonly string[]): string {
  const list = (items: readonly string[] | undefined) => (items?.length ? items.map(code).join(', ') : '');
  return [
    '| name | requires | provides | routes it serves | commands | config keys | what it does |',
    '|---|---|---|---|---|---|---|',
    ...plugins.map((p) => {
      const routes = [
        ...(p.endpoints ?? []).map((e) => `${e.method} ${e.path}`),
        ...(p.adminRoutes ?? []).map((r) => `${r.method} ${adminPath(r.path)}`),
      ];
      const commands = (p.commands ?? []).map((c) => `aigw ${c.name}`);
      const keys = Object.keys(properties(p.configSchema));
      return `| ${code(p.name)} | ${list(p.requires)} | ${list(p.provides)} | ${list(routes)} | ${list(commands)} | ${list(keys) || 'none'} | ${cell(firstSentence(p.description))} |`;
    }),
    '',
    `A file that declares no \`default\` pipeline gets one of ${defaultPipeline.map(code).join(', ')}, in that order.`,
  ].join('\n');
}

function typeOf(schema: JsonSchema): string {
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => code(String(v))).join(', ');
  const variants = (schema.oneOf ?? schema.anyOf) as JsonSchema[] | undefined;
  if (variants) return variants.map(typeOf).join(' or ');
  const type = Array.isArray(schema.type) ? schema.type.join(' or ') : (schema.type as string | undefined) ?? 'any';
  if (type === 'integer' || type === 'number') {
    const { minimum: min, maximum: max } = schema as { minimum?: number; maximum?: number };
    if (min !== undefined && max !== undefined) return `${type} ${min}-${max}`;
    if (min !== undefined) return `${type} ≥ ${min}`;
    if (max !== undefined) return `${type} ≤ ${max}`;
  }
  if (type === 'string') {
    const { minLength, maxLength, format } = schema as { minLength?: number; maxLength?: number; format?: string };
    const bounds = [minLength !== undefined && `at least ${minLength}`, maxLength !== undefined && `at most ${maxLength}`].filter(Boolean).join(', ');
    if (minLength === 1 && maxLength === undefined) return ['non-empty string', format && `(${format})`].filter(Boolean).join(' ');
    return ['string', format && `(${format})`, bounds && `of ${bounds} characters`].filter(Boolean).join(' ');
  }
  if (type === 'array') return `list of ${schema.items ? typeOf(schema.items as JsonSchema) : 'any'}`;
  if (type === 'object' && !schema.properties && typeof schema.additionalProperties === 'object') {
    return `map of name to ${typeOf(schema.additionalProperties as JsonSchema)}`;
  }
  return type;
}

/** One row per field, nested objects' fields as `parent.child` and lists of objects' as `parent[].child`. */
function configRows(schema: JsonSchema, prefix: string, depth: number): string[] {
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties(schema)).flatMap(([name, field]) => {
    const path = `${prefix}${name}`;
    const fallback = field.default === undefined ? (required.has(name) ? 'required' : 'unset')
      : code(typeof field.default === 'string' ? field.default : JSON.stringify(field.default));
    const row = `| ${code(path)} | ${cell(typeOf(field))} | ${fallback} | ${cell(String(field.description ?? ''))} |`;
    if (depth >= 3) return [row];
    if (field.properties) return [row, ...configRows(field, `${path}.`, depth + 1)];
    const items = field.items as JsonSchema | undefined;
    if (items?.properties) return [row, ...configRows(items, `${path}[].`, depth + 1)];
    return [row];
  });
}

/** A plugin's config reference: every field of its schema, with type, default and description. */
export function renderConfigReference(plugin: AnyPluginDefinition): string {
  const rows = configRows(plugin.configSchema, '', 0);
  if (rows.length === 0) return `\`${plugin.name}\` takes no config keys.`;
  return ['| key | type | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

interface Route { path: string; methods: string[]; patterns: string[]; capability: string | null; owner: string; summary: string }

/** The data-plane routes pipelines can name: the core's, then the plugins', each once with its methods. */
export function dataPlaneRoutes(plugins: readonly AnyPluginDefinition[]): Route[] {
  const routes = new Map<string, Route>();
  const add = (endpoint: EndpointDescription, owner: string) => {
    const pattern = endpoint.routePattern ?? endpoint.path;
    const known = routes.get(endpoint.path);
    if (!known) {
      routes.set(endpoint.path, { path: endpoint.path, methods: [endpoint.method], patterns: [pattern], capability: endpoint.capability, owner, summary: endpoint.summary });
      return;
    }
    if (!known.methods.includes(endpoint.method)) known.methods.push(endpoint.method);
    if (!known.patterns.includes(pattern)) known.patterns.push(pattern);
  };
  for (const endpoint of endpoints) add(endpoint, 'core');
  for (const plugin of plugins) for (const endpoint of plugin.endpoints ?? []) add(endpoint, `the ${code(plugin.name)} plugin`);
  return [...routes.values()];
}

export function renderRouteList(plugins: readonly AnyPluginDefinition[]): string {
  const routes = dataPlaneRoutes(plugins);
  return [
    `${routes.length} routes:`,
    '',
    '| route | methods | paths | capability | served by | what it does |',
    '|---|---|---|---|---|---|',
    ...routes.map((r) => `| ${code(r.path)} | ${r.methods.join(', ')} | ${r.patterns.map(code).join(', ')} | ${r.capability ? code(r.capability) : 'any credential'} | ${r.owner} | ${cell(firstSentence(r.summary))} |`),
  ].join('\n');
}

/** The admin API's routes: the core's, then the plugins', with their query filters. */
export function renderAdminRoutes(plugins: readonly AnyPluginDefinition[]): string {
  const row = (route: AdminRouteDescription, owner: string) => {
    const filters = Object.keys(route.filters ?? {});
    const query = [...(route.list ? ['limit', 'cursor'] : []), ...filters].map(code).join(', ');
    return `| ${route.method} | ${code(adminPath(route.path))} | ${owner} | ${query} | ${cell(firstSentence(route.summary))} |`;
  };
  return [
    '| method | path | served by | query | what it does |',
    '|---|---|---|---|---|',
    ...adminRoutes.map((route) => row(route, 'core')),
    ...plugins.flatMap((p) => (p.adminRoutes ?? []).map((route) => row(route, `the ${code(p.name)} plugin`))),
  ].join('\n');
}

interface ErrorRow { code: string; status: number; meaning: string }

/** The core's codes, then those the plugins declare, in the catalogue's order (by status). */
export function errorRows(plugins: readonly AnyPluginDefinition[]): ErrorRow[] {
  const rows: ErrorRow[] = Object.entries(ERROR_CATALOGUE).map(([c, status]) => ({ code: c, status, meaning: ERROR_MEANINGS[c as keyof typeof ERROR_CATALOGUE] }));
  for (const plugin of plugins) {
    for (const [c, spec] of Object.entries(plugin.errors ?? {})) rows.push({ code: c, status: spec.status, meaning: `the ${plugin.name} plugin: ${spec.description}` });
  }
  return rows.sort((a, b) => a.status - b.status);
}

/** The error table; `only` keeps the named codes (a doc about one feature), in the catalogue's order. */
export function renderErrorTable(plugins: readonly AnyPluginDefinition[], only?: readonly string[]): string {
  const rows = errorRows(plugins);
  const unknown = only?.filter((c) => !rows.some((row) => row.code === c)) ?? [];
  if (unknown.length > 0) throw new Error(`no error code ${unknown.join(', ')} in the catalogue`);
  return [
    '| code | status | meaning |',
    '|---|---|---|',
    ...rows.filter((row) => !only || only.includes(row.code)).map((row) => `| ${code(row.code)} | ${row.status} | ${cell(row.meaning)} |`),
  ].join('\n');
}
