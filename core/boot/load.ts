/**
 * pipelines.yaml -> a validated GatewayConfig plus the plugin and provider registries it names.
 * Every mistake is reported as `file:line:col /json/pointer: what was expected`, all of them at once.
 */
import { readFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { ProviderRegistry } from '../dispatch/provider-registry.ts';
import { importDefinitions } from '../pipeline/modules.ts';
import { PluginRegistry } from '../pipeline/registry.ts';
import type { Ajv, ValidateFunction } from 'ajv';
import { createAjv } from '../validation.ts';
import { ConfigError, PositionedDocument, type ConfigIssue } from '../config/document.ts';
import { configIssues } from '../config/issues.ts';
import { buildConfigSchema } from '../config/schema.ts';
import { DEFAULT_PIPELINE, semanticIssues } from './semantics.ts';
import type { GatewayConfig, ModelConfig, PluginEntry } from '../config/types.ts';
import { emptyCredentials, type EmptyCredential } from './startup-checks.ts';

export interface LoadedConfig {
  config: GatewayConfig;
  plugins: PluginRegistry;
  providers: ProviderRegistry;
  /** Enabled providers whose apiKey came out empty: `aigw start` warns of each. */
  emptyCredentials: EmptyCredential[];
}

/**
 * What the gateway or CLI registers before the file's own packages: the built-in plugins and providers, and the
 * plugin list of the implicit `default` pipeline. The loader knows none of them by name.
 */
export interface BuiltIns {
  plugins: readonly unknown[];
  providers: readonly unknown[];
  defaultPipeline: readonly string[];
}

export interface LoadOptions {
  builtIns: BuiltIns;
  /** Config path; default $AIGW_CONFIG, then ./pipelines.yaml. */
  file?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

type Data = Record<string, unknown>;

export function configPath(options: Partial<LoadOptions> = {}): string {
  const env = options.env ?? process.env;
  return resolve(options.cwd ?? process.cwd(), options.file ?? env.AIGW_CONFIG ?? 'pipelines.yaml');
}

export async function loadConfig(options: LoadOptions): Promise<LoadedConfig> {
  const cwd = options.cwd ?? process.cwd();
  const path = configPath(options);
  const display = relative(cwd, path) || path;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(display, [{ pointer: '', message: `cannot read the config file: ${(err as Error).message}` }]);
  }
  return parseConfig(text, { file: path, display, env: options.env ?? process.env, cwd, builtIns: options.builtIns });
}

export async function parseConfig(
  text: string,
  source: { file: string; display?: string; env: NodeJS.ProcessEnv; cwd?: string; builtIns: BuiltIns },
): Promise<LoadedConfig> {
  const display = source.display ?? source.file;
  const dir = dirname(source.file);
  const doc = PositionedDocument.parse(text, display);
  const fail = (issues: ConfigIssue[]) => {
    if (issues.length > 0) throw new ConfigError(display, issues);
  };
  // Before substitution, where an empty credential's variable is still named.
  const written = doc.toJS();
  fail(doc.interpolate(source.env));

  const data = doc.toJS() as Data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) fail([{ pointer: '', message: 'expected a mapping at the top level', line: 1, col: 1 }]);
  applyEnvironmentDefaults(data, source.env, source.cwd ?? process.cwd());
  normalizePluginEntries(data);

  const plugins = new PluginRegistry();
  const providers = new ProviderRegistry();
  for (const p of source.builtIns.plugins) plugins.register(p);
  for (const p of source.builtIns.providers) providers.register(p);
  fail(await registerThirdParty(data, doc, dir, plugins, providers));

  const configured = data.providers;
  const schema = buildConfigSchema(
    plugins.list().map((p) => ({ name: p.name, configSchema: p.configSchema })),
    providers.list().map((p) => ({ name: p.slug, configSchema: p.configSchema })),
    new Set(typeof configured === 'object' && configured !== null ? Object.keys(configured) : []),
  );
  const validate = configValidator(schema);
  if (!validate(data)) fail(configIssues(validate.errors ?? [], doc));

  const config = withImplicitDefault(toConfig(data, { file: source.file, dir }), plugins, source.builtIns.defaultPipeline);
  fail(semanticIssues(config, providers, plugins).map((i) => ({ ...i, ...doc.locate(i.pointer, i.key) })));
  return { config, plugins, providers, emptyCredentials: emptyCredentials(config, written) };
}

/**
 * Compiling the config schema and the plugins' schemas (for the implicit default pipeline's defaults) cost 0.3 to
 * 0.6 s of CPU per load; each distinct schema is compiled once per process, and a process that loads configs
 * again (a test run that starts many gateways) reuses them: a load then takes a few ms. Bounded, oldest first.
 */
const compiledSchemas = new Map<string, { schema: object; validate: ValidateFunction }>();
const COMPILED_SCHEMAS_KEPT = 32;
let configAjv: Ajv | undefined;

function configValidator(schema: object): ValidateFunction {
  const text = JSON.stringify(schema);
  const kept = compiledSchemas.get(text);
  if (kept) return kept.validate;
  // One instance for all of them: each new one would set up its formats and keywords again.
  configAjv ??= createAjv({ useDefaults: true });
  const validate = configAjv.compile(schema);
  if (compiledSchemas.size >= COMPILED_SCHEMAS_KEPT) {
    const [oldest, entry] = compiledSchemas.entries().next().value!;
    compiledSchemas.delete(oldest);
    configAjv.removeSchema(entry.schema);
  }
  compiledSchemas.set(text, { schema, validate });
  return validate;
}

function applyEnvironmentDefaults(data: Data, env: NodeJS.ProcessEnv, cwd: string): void {
  // A section written as something other than a mapping is left for the schema to report; its defaults are
  // written to a detached object.
  const section = (name: string, parent: Data = data): Data => {
    if (parent[name] === undefined || parent[name] === null) parent[name] = {};
    const value = parent[name];
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Data) : {};
  };
  const fromEnv = (target: Data, key: string, variable: string) => {
    if ((target[key] === undefined || target[key] === '') && env[variable]) target[key] = env[variable];
  };
  const server = section('server');
  if (server.port === undefined && env.PORT && /^\d+$/.test(env.PORT)) server.port = Number(env.PORT);
  fromEnv(server, 'host', 'HOST');
  const storage = section('storage');
  fromEnv(storage, 'dataDir', 'AIGW_DATA_DIR');
  fromEnv(storage, 'databaseUrl', 'DATABASE_URL');
  fromEnv(storage, 'redisUrl', 'REDIS_URL');
  if (storage.dataDir === undefined) storage.dataDir = resolve(cwd, 'data');
  else if (typeof storage.dataDir === 'string') storage.dataDir = resolve(cwd, storage.dataDir);
  const auth = section('auth');
  fromEnv(auth, 'adminToken', 'AIGW_ADMIN_TOKEN');
  fromEnv(section('jwt', auth), 'secret', 'AIGW_JWT_SECRET');
}

/**
 * Routes that no pipeline names are served by the pipeline named `default`; a file that declares none gets the
 * built-ins' default chain. Each entry takes the settings of the first entry of the same plugin the file
 * declares (so limits configured on one pipeline hold on every route), else its schema's defaults.
 */
function withImplicitDefault(config: GatewayConfig, plugins: PluginRegistry, chain: readonly string[]): GatewayConfig {
  if (config.pipelines.some((p) => p.name === DEFAULT_PIPELINE)) return config;
  const entries = chain.flatMap((name): PluginEntry[] => {
    const declared = config.pipelines.flatMap((p) => p.plugins).find((e) => e.name === name);
    if (declared) return [{ name, config: structuredClone(declared.config) }];
    const plugin = plugins.get(name);
    if (!plugin) return [];
    const defaults: Record<string, unknown> = {};
    configValidator(plugin.configSchema)(defaults);
    return [{ name, config: defaults }];
  });
  return { ...config, pipelines: [...config.pipelines, { name: DEFAULT_PIPELINE, routes: [], plugins: entries }] };
}

/**
 * `- auth` and `- auth:` (a key with no value) both mean "no config": they become `{auth: {}}`, so that the
 * plugin's schema applies its defaults and reports required settings for every entry alike.
 */
function normalizePluginEntries(data: Data): void {
  if (!Array.isArray(data.pipelines)) return;
  for (const pipeline of data.pipelines as Data[]) {
    if (!pipeline || !Array.isArray(pipeline.plugins)) continue;
    const entries = pipeline.plugins as unknown[];
    entries.forEach((entry, i) => {
      if (typeof entry === 'string') entries[i] = { [entry]: {} };
      else if (entry && typeof entry === 'object' && !Array.isArray(entry)) {
        for (const [name, value] of Object.entries(entry)) if (value === null) (entry as Data)[name] = {};
      }
    });
  }
}

async function registerThirdParty(data: Data, doc: PositionedDocument, dir: string, plugins: PluginRegistry, providers: ProviderRegistry): Promise<ConfigIssue[]> {
  const issues: ConfigIssue[] = [];
  const sections: Array<['plugins' | 'providerPackages', PluginRegistry | ProviderRegistry]> = [['plugins', plugins], ['providerPackages', providers]];
  for (const [section, registry] of sections) {
    const specs = data[section];
    if (specs === undefined) continue;
    if (!Array.isArray(specs)) {
      issues.push({ pointer: `/${section}`, message: 'expected a list of package names or paths', ...doc.locate(`/${section}`) });
      continue;
    }
    for (const [i, spec] of specs.entries()) {
      const pointer = `/${section}/${i}`;
      if (typeof spec !== 'string' || spec === '') {
        issues.push({ pointer, message: 'expected a package name or a path', ...doc.locate(pointer) });
        continue;
      }
      try {
        for (const definition of await importDefinitions(spec, dir)) registry.register(definition, spec);
      } catch (err) {
        issues.push({ pointer, message: `cannot load "${spec}": ${(err as Error).message.split('\n')[0]}`, ...doc.locate(pointer) });
      }
    }
  }
  return issues;
}

function toConfig(data: Data, source: GatewayConfig['source']): GatewayConfig {
  const validated = data as unknown as Omit<GatewayConfig, 'source' | 'pipelines' | 'models'> & {
    pipelines: Array<{ name: string; routes: string[]; plugins: Array<Record<string, Record<string, unknown>>> }>;
    models: Array<Omit<ModelConfig, 'strategy'> & { strategy?: ModelConfig['strategy'] }>;
  };
  const emptyToUndefined = (v: string | undefined) => (v ? v : undefined);
  return {
    ...validated,
    source,
    storage: { ...validated.storage, databaseUrl: emptyToUndefined(validated.storage.databaseUrl), redisUrl: emptyToUndefined(validated.storage.redisUrl) },
    auth: {
      ...validated.auth,
      adminToken: emptyToUndefined(validated.auth.adminToken),
      jwt: { ...validated.auth.jwt, secret: emptyToUndefined(validated.auth.jwt.secret) },
    },
    models: validated.models.map((m) => ({ ...m, strategy: m.strategy ?? (m.targets && m.targets.length > 1 ? 'fallback' : 'single') })),
    pipelines: validated.pipelines.map((p) => ({
      name: p.name,
      routes: p.routes,
      plugins: p.plugins.map((entry): PluginEntry => {
        const [name, config] = Object.entries(entry)[0]!;
        return { name, config };
      }),
    })),
  };
}
