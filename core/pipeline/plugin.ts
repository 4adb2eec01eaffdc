/**
 * The plugin contract: a named Koa middleware factory with a JSON schema for its configuration. Order
 * comes from the pipeline's list in pipelines.yaml; a plugin that answers early does not call next().
 */
import type { Logger } from '../logger.ts';
import type { GatewayConfig } from '../config/types.ts';
import type { JsonSchema } from '../config/schema.ts';
import type { Database } from '../store/database.ts';
import type { KV } from '../store/kv.ts';
import type { ProviderRegistry } from '../dispatch/provider-registry.ts';
import type { ApiKeyService } from '../identity/api-keys.ts';
import type { Authenticator } from '../identity/authenticate.ts';
import type { Directory } from '../identity/directory.ts';
import type { GatewayMiddleware } from './context.ts';

export interface Clock {
  /** Wall time in ms since the epoch. */
  now(): number;
}

export interface PluginServices {
  config: GatewayConfig;
  db: Database;
  kv: KV;
  logger: Logger;
  clock: Clock;
  providers: ProviderRegistry;
  apiKeys: ApiKeyService;
  /** Tenants, organizations, departments and their policies. */
  directory: Directory;
  /** Turns a presented credential into a Caller (or a 401/403 GatewayError). */
  authenticator: Authenticator;
  /** Runs at shutdown after in-flight requests finish and before the stores close (flush buffers here). */
  onClose(hook: () => Promise<void>): void;
}

export interface PluginDefinition<Config = Record<string, unknown>> {
  /** Lower-case name used in pipelines.yaml. */
  name: string;
  description: string;
  /** JSON schema of the entry's config; every property should carry a description. Defaults are applied. */
  configSchema: JsonSchema;
  setup(config: Config, services: PluginServices): GatewayMiddleware | Promise<GatewayMiddleware>;
  /**
   * Rules across the plugin's entries (of every pipeline, in file order) that its schema cannot say, such as
   * entries sharing one instance having to agree. The loader runs it, so `aigw validate` refuses with file:line
   * what `start` would. Returns the offending entries by their index in `entries`; setup may assume it passed.
   */
  checkEntries?(entries: readonly Config[]): Array<{ entry: number; message: string }>;
}

const NAME = /^[a-z][a-z0-9-]{0,62}$/;

/** Checks a plugin's metadata when it is defined or registered, not when the first request reaches it. */
export function definePlugin<Config>(definition: PluginDefinition<Config>): PluginDefinition<Config> {
  const problems = pluginProblems(definition);
  if (problems.length > 0) throw new Error(`invalid plugin definition: ${problems.join('; ')}`);
  return definition;
}

export function pluginProblems(value: unknown): string[] {
  const d = value as Partial<PluginDefinition> | null;
  if (!d || typeof d !== 'object') return ['a plugin module must export a definition object (definePlugin({...}))'];
  const problems: string[] = [];
  if (typeof d.name !== 'string' || !NAME.test(d.name)) problems.push(`name must match ${NAME} (got ${JSON.stringify(d.name)})`);
  if (typeof d.description !== 'string' || d.description.length === 0) problems.push(`plugin ${d.name}: description is required`);
  if (!d.configSchema || typeof d.configSchema !== 'object' || d.configSchema.type !== 'object') problems.push(`plugin ${d.name}: configSchema must be a JSON schema of type object`);
  if (typeof d.setup !== 'function') problems.push(`plugin ${d.name}: setup must be a function`);
  if (d.checkEntries !== undefined && typeof d.checkEntries !== 'function') problems.push(`plugin ${d.name}: checkEntries must be a function`);
  return problems;
}
