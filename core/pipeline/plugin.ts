/**
 * The plugin contract. A plugin is a named middleware factory with a JSON schema for its configuration, and it
 * may own more: its tables (migrations), its data-plane and admin routes, its KV operations, its error codes,
 * per-gateway state shared by all of it (init), and the facts it needs from and gives to the pipeline
 * (requires / provides), so that the core checks order without knowing any plugin's name. Order comes from the
 * pipeline's list in pipelines.yaml; a plugin that answers early does not call next().
 */
import type { Modality } from '../canonical/chat.ts';
import type { GatewayConfig } from '../config/types.ts';
import type { JsonSchema } from '../json-schema.ts';
import { errorCodeProblem } from '../errors.ts';
import type { GatewayMiddleware } from './context.ts';
import type { MeteredWork } from './metered.ts';
import type { AdminWriteEvent, PluginAdminRoute, PluginEndpoint } from './routes.ts';
import type { PluginDatabase, PluginServices } from './services.ts';

export type { Clock, PluginServices } from './services.ts';

/**
 * The contract version this gateway implements. definePlugin stamps it on a definition; the registry refuses a
 * definition made for another version, with a message naming both.
 */
export const PLUGIN_API_VERSION = 1;

export interface PluginErrorCode {
  /** HTTP status, 400-599. */
  status: number;
  /** When the code is answered: for the plugin's docs and /openapi.json readers. */
  description: string;
  /**
   * `endpoint` (default): rendered in the envelope of the endpoint that failed (the Messages or legacy shape on
   * those endpoints); `canonical`: always `{error: {code, message, details}}`, as the core's own auth, validation
   * and rate-limit refusals are, for errors clients must tell apart by code whatever the endpoint.
   */
  envelope?: 'endpoint' | 'canonical';
}

/** What checkEntries may read beside the entries: the rest of the file, and what its models can serve. */
export interface EntryCheckContext {
  /** The validated file, defaults applied. */
  readonly config: Readonly<GatewayConfig>;
  /** Whether `models` has an enabled model of this id with a target whose provider serves the modality. */
  modelServes(modelId: string, modality: Modality): boolean;
}

export interface PluginDefinition<Config = Record<string, unknown>, Shared = undefined> {
  /** Set by definePlugin: the contract version the plugin was written against. */
  apiVersion?: number;
  /** Lower-case name used in pipelines.yaml. */
  name: string;
  description: string;
  /** JSON schema of the entry's config; every property should carry a description. Defaults are applied. */
  configSchema: JsonSchema;
  /**
   * Facts this plugin needs an earlier plugin of the same pipeline to provide, such as "caller" (a plugin that
   * reads gw.caller). The config loader refuses a pipeline that lists it before them.
   */
  requires?: readonly string[];
  /** Facts this plugin establishes for the plugins after it ("caller": gw.caller is set when next() is called). */
  provides?: readonly string[];
  /** Error codes this plugin answers with, besides the core's: UPPER_SNAKE_CASE, with their HTTP status. */
  errors?: Readonly<Record<string, PluginErrorCode>>;
  /**
   * A folder of `NNNN_name.sql` files, applied in order at start and by `aigw migrate`, each once, recorded as
   * `<plugin>/<file>`, after the core's. Absolute (new URL('./migrations/', import.meta.url) with fileURLToPath).
   */
  migrations?: string;
  /** Once per gateway, after the stores open and before any setup: state that entries and routes share. */
  init?(services: PluginServices): Shared | Promise<Shared>;
  /** Once per pipeline entry: the entry's middleware. */
  setup(config: Config, services: PluginServices, shared: Shared): GatewayMiddleware | Promise<GatewayMiddleware>;
  /** Data-plane endpoints this plugin serves (pipelines.yaml may attach pipelines to their paths). */
  endpoints?: ReadonlyArray<PluginEndpoint<Shared>>;
  /** Routes under /admin/v1, behind the admin credentials. */
  adminRoutes?: ReadonlyArray<PluginAdminRoute<Shared>>;
  /**
   * Rules across the plugin's entries (of every pipeline, in file order) that its schema cannot say, such as
   * entries sharing one instance having to agree, or a model an entry names having to exist. The loader runs it, so `aigw validate` refuses with file:line
   * what `start` would. Returns the offending entries by their index in `entries`; setup may assume it passed.
   */
  checkEntries?(entries: readonly Config[], context: EntryCheckContext): Array<{ entry: number; message: string }>;
  /**
   * Work metered outside a request (a batch that ended), reported once it is over, whether or not the plugin is
   * in a pipeline. Must be idempotent per work.id: the same work may be reported again, and concurrently by two
   * instances. A throw makes the reporter try again later; the other plugins' hooks run all the same.
   */
  onMeteredWork?(work: MeteredWork, services: PluginServices, shared: Shared): Promise<void>;
  /**
   * Every write the admin API answered (a non-GET route: success, refusal or failure), after the answer is
   * decided, whether or not the plugin is in a pipeline. Called without being awaited: keep it cheap (queue
   * the event); a rejection is logged. The event never holds a request or response body.
   */
  onAdminWrite?(event: AdminWriteEvent, services: PluginServices, shared: Shared): void | Promise<void>;
  /** Subcommands of the `aigw` CLI (`aigw <name> ...`), run over the stores the config names. */
  commands?: readonly PluginCommand[];
}

/** What a plugin's CLI command gets: the validated config and the database, opened (and migrated) for it. */
export interface PluginCommandContext {
  readonly config: Readonly<GatewayConfig>;
  readonly db: PluginDatabase;
  /** Writes to standard output and standard error. */
  out(text: string): void;
  err(text: string): void;
}

export interface PluginCommand {
  /** `aigw <name>`: lower-case, and not one of the core's commands. */
  name: string;
  /** One or more lines for `aigw --help`, each `<name> <arguments>  <what it does>`. */
  usage: string;
  /** Runs with the arguments after the name (`--config FILE` taken out); resolves with the exit code. */
  run(args: readonly string[], context: PluginCommandContext): Promise<number>;
}

/** A definition of any config and shared state, as registries hold them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyPluginDefinition = PluginDefinition<any, any>;

const NAME = /^[a-z][a-z0-9-]{0,62}$/;
const FACT = /^[a-z][a-z0-9-]{0,62}$/;
const MIGRATION_FOLDER = /^(\/|[A-Za-z]:[\\/])/;

/** Checks a plugin's metadata when it is defined or registered, not when the first request reaches it. */
export function definePlugin<Config, Shared = undefined>(definition: PluginDefinition<Config, Shared>): PluginDefinition<Config, Shared> {
  const stamped = { apiVersion: PLUGIN_API_VERSION, ...definition };
  const problems = pluginProblems(stamped);
  if (problems.length > 0) throw new Error(`invalid plugin definition: ${problems.join('; ')}`);
  return stamped;
}

export function pluginProblems(value: unknown): string[] {
  const d = value as Partial<AnyPluginDefinition> | null;
  if (!d || typeof d !== 'object') return ['a plugin module must export a definition object (definePlugin({...}) from aigw/plugin)'];
  const problems: string[] = [];
  const label = `plugin ${JSON.stringify(d.name)}`;
  if (d.apiVersion === undefined) {
    problems.push(`${label} has no apiVersion: make it with definePlugin from aigw/plugin (this gateway implements plugin contract ${PLUGIN_API_VERSION})`);
  } else if (d.apiVersion !== PLUGIN_API_VERSION) {
    problems.push(`${label} was written for plugin contract ${JSON.stringify(d.apiVersion)}, and this gateway implements contract ${PLUGIN_API_VERSION}: use a version of the plugin made for it`);
  }
  if (typeof d.name !== 'string' || !NAME.test(d.name)) problems.push(`name must match ${NAME} (got ${JSON.stringify(d.name)})`);
  if (typeof d.description !== 'string' || d.description.length === 0) problems.push(`${label}: description is required`);
  if (!d.configSchema || typeof d.configSchema !== 'object' || d.configSchema.type !== 'object') problems.push(`${label}: configSchema must be a JSON schema of type object`);
  if (typeof d.setup !== 'function') problems.push(`${label}: setup must be a function`);
  for (const fn of ['checkEntries', 'init', 'onMeteredWork', 'onAdminWrite'] as const) {
    if (d[fn] !== undefined && typeof d[fn] !== 'function') problems.push(`${label}: ${fn} must be a function`);
  }
  for (const list of ['requires', 'provides'] as const) {
    const facts = d[list];
    if (facts !== undefined && (!Array.isArray(facts) || facts.some((f) => typeof f !== 'string' || !FACT.test(f)))) {
      problems.push(`${label}: ${list} must be a list of lower-case names`);
    }
  }
  if (d.migrations !== undefined && (typeof d.migrations !== 'string' || !MIGRATION_FOLDER.test(d.migrations))) {
    problems.push(`${label}: migrations must be an absolute folder path`);
  }
  for (const [code, spec] of Object.entries(d.errors ?? {})) {
    const problem = errorCodeProblem(code, spec?.status);
    if (problem) problems.push(`${label}: ${problem}`);
    if (spec?.envelope !== undefined && spec.envelope !== 'endpoint' && spec.envelope !== 'canonical') problems.push(`${label}: error code ${code}: envelope must be "endpoint" or "canonical"`);
  }
  problems.push(...routeProblems(label, d));
  for (const command of d.commands ?? []) {
    if (typeof command?.name !== 'string' || !NAME.test(command.name)) problems.push(`${label}: a command's name must match ${NAME}`);
    else if (typeof command.run !== 'function' || typeof command.usage !== 'string') problems.push(`${label}: command ${command.name} needs usage and a run function`);
  }
  return problems;
}

function routeProblems(label: string, d: Partial<AnyPluginDefinition>): string[] {
  const problems: string[] = [];
  for (const endpoint of d.endpoints ?? []) {
    if (typeof endpoint?.path !== 'string' || !endpoint.path.startsWith('/')) problems.push(`${label}: an endpoint's path must start with /`);
    else if (typeof endpoint.handler !== 'function') problems.push(`${label}: endpoint ${endpoint.path} needs a handler`);
  }
  for (const route of d.adminRoutes ?? []) {
    if (typeof route?.path !== 'string' || !route.path.startsWith('/')) problems.push(`${label}: an admin route's path must start with /`);
    else if (typeof route.handle !== 'function') problems.push(`${label}: admin route ${route.path} needs a handle function`);
  }
  return problems;
}
