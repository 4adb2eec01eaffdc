/** Rules a JSON schema cannot say: references between sections, uniqueness, and every /v1 route behind auth. */
import { missingPlaceholders } from '../dispatch/base-url.ts';
import type { ProviderRegistry } from '../dispatch/provider-registry.ts';
import type { PluginRegistry } from '../pipeline/registry.ts';
import type { EntryCheckContext } from '../pipeline/plugin.ts';
import type { ProviderCapabilities } from '../dispatch/provider.ts';
import type { Modality } from '../canonical/chat.ts';
import { parseRange } from '../identity/addresses.ts';
import { allowListEntryKind } from '../outbound/policy.ts';
import { endpointPaths } from '../api/endpoints.ts';
import { DEFAULT_PIPELINE, type GatewayConfig } from '../config/types.ts';

export { DEFAULT_PIPELINE };

export interface SemanticIssue {
  pointer: string;
  message: string;
  /** Point at this key of the map at `pointer` rather than at the map. */
  key?: string;
}


/** The fact a plugin provides when it sets gw.caller; every /v1 route and the passthrough need it. */
export const CALLER = 'caller';

export function semanticIssues(config: GatewayConfig, providers: ProviderRegistry, plugins: PluginRegistry): SemanticIssue[] {
  return [...serverIssues(config), ...pipelineIssues(config, plugins), ...pluginEntryIssues(config, plugins, providers), ...modelIssues(config), ...providerIssues(config, providers), ...vectorStoreIssues(config)];
}

function vectorStoreIssues(config: GatewayConfig): SemanticIssue[] {
  const { embeddingModel, chunkTokens, chunkOverlapTokens } = config.vectorStores;
  const issues: SemanticIssue[] = [];
  if (chunkOverlapTokens * 2 > chunkTokens) {
    issues.push({ pointer: '/vectorStores/chunkOverlapTokens', message: `must be at most half of chunkTokens (${chunkTokens}), got ${chunkOverlapTokens}` });
  }
  if (embeddingModel !== undefined && !config.models.some((m) => m.id === embeddingModel)) {
    issues.push({ pointer: '/vectorStores/embeddingModel', message: `model "${embeddingModel}" is not declared under models (declared: ${config.models.map((m) => m.id).join(', ') || 'none'})` });
  }
  return issues;
}

/** Each plugin's own rules across its entries (PluginDefinition.checkEntries), which start would otherwise meet in setup. */
function pluginEntryIssues(config: GatewayConfig, plugins: PluginRegistry, providers: ProviderRegistry): SemanticIssue[] {
  const context: EntryCheckContext = { config, modelServes: (id, modality) => modelServes(config, providers, id, modality) };
  const entries = new Map<string, Array<{ pointer: string; config: unknown }>>();
  config.pipelines.forEach((pipeline, i) => pipeline.plugins.forEach((entry, j) => {
    const list = entries.get(entry.name) ?? [];
    list.push({ pointer: `/pipelines/${i}/plugins/${j}`, config: entry.config });
    entries.set(entry.name, list);
  }));
  return [...entries].flatMap(([name, list]) => {
    const check = plugins.get(name)?.checkEntries;
    if (!check) return [];
    return check(list.map((e) => e.config as never), context).map(({ entry, message }) => ({
      pointer: list[entry]?.pointer ?? '/pipelines',
      message: `plugin "${name}": ${message}`,
    }));
  });
}

/** Whether an enabled model of `models` has a target whose provider's translator serves the modality. */
function modelServes(config: GatewayConfig, providers: ProviderRegistry, id: string, modality: Modality): boolean {
  const model = config.models.find((m) => m.id === id);
  if (!model || !model.enabled) return false;
  const slugs = model.targets ? model.targets.map((t) => t.provider) : model.provider !== undefined ? [model.provider] : [];
  return slugs.some((slug) => Boolean(providers.get(slug)?.capabilities[modality as keyof ProviderCapabilities]));
}

/** HS256 with a short secret can be brute-forced offline from any token a user holds. */
export const MIN_JWT_SECRET_LENGTH = 32;

function serverIssues(config: GatewayConfig): SemanticIssue[] {
  // A proxy entry that cannot be read must stop the boot: silently trusting fewer proxies than intended
  // would make every client look like the proxy.
  const issues: SemanticIssue[] = config.server.trustedProxies.flatMap((entry, i) => parseRange(entry)
    ? []
    : [{ pointer: `/server/trustedProxies/${i}`, message: `not an IPv4/IPv6 address or CIDR range: ${JSON.stringify(entry)}` }]);
  // An outbound allow-list entry that cannot be read stops the boot too: it would match nothing, and the
  // operator would chase a refused webhook instead of a typo.
  config.outbound.allowedAddresses.forEach((entry, i) => {
    if (!allowListEntryKind(entry)) issues.push({ pointer: `/outbound/allowedAddresses/${i}`, message: `not an IPv4/IPv6 address, CIDR range or host name: ${JSON.stringify(entry)}` });
  });
  const { headersTimeoutMs, requestTimeoutMs } = config.server;
  if (headersTimeoutMs > requestTimeoutMs) {
    issues.push({ pointer: '/server/headersTimeoutMs', message: `must not exceed server.requestTimeoutMs (${requestTimeoutMs}): the headers are part of the request, got ${headersTimeoutMs}` });
  }
  const secret = config.auth.jwt.secret;
  if (secret !== undefined && secret.length < MIN_JWT_SECRET_LENGTH) {
    issues.push({ pointer: '/auth/jwt/secret', message: `the JWT secret (auth.jwt.secret or AIGW_JWT_SECRET) must be at least ${MIN_JWT_SECRET_LENGTH} characters, got ${secret.length}` });
  }
  return issues;
}

function pipelineIssues(config: GatewayConfig, plugins: PluginRegistry): SemanticIssue[] {
  const issues: SemanticIssue[] = [];
  const known = [...endpointPaths(), ...new Set(plugins.list().flatMap((p) => (p.endpoints ?? []).map((e) => e.path)))];
  const names = new Map<string, number>();
  const owners = new Map<string, string>();
  const providersOf = (fact: string) => plugins.list().filter((p) => p.provides?.includes(fact)).map((p) => p.name);
  const suggest = (fact: string) => {
    const candidates = providersOf(fact);
    return candidates.length > 0 ? ` (provided by: ${candidates.join(', ')})` : '';
  };
  config.pipelines.forEach((pipeline, i) => {
    const at = `/pipelines/${i}`;
    if (names.has(pipeline.name)) issues.push({ pointer: `${at}/name`, message: `pipeline name "${pipeline.name}" is already used by /pipelines/${names.get(pipeline.name)}` });
    names.set(pipeline.name, i);
    pipeline.routes.forEach((route, j) => {
      if (!known.includes(route)) issues.push({ pointer: `${at}/routes/${j}`, message: `unknown route "${route}" (known: ${known.join(', ')})` });
      else if (owners.has(route)) issues.push({ pointer: `${at}/routes/${j}`, message: `route ${route} is already served by pipeline "${owners.get(route)}"` });
      else owners.set(route, pipeline.name);
    });
    const provided = new Set<string>();
    pipeline.plugins.forEach((entry, j) => {
      const plugin = plugins.get(entry.name);
      for (const fact of plugin?.requires ?? []) {
        if (!provided.has(fact)) issues.push({ pointer: `${at}/plugins/${j}`, message: `plugin "${entry.name}" requires "${fact}": list it after a plugin that provides it${suggest(fact)}` });
      }
      for (const fact of plugin?.provides ?? []) provided.add(fact);
    });
    const servesV1 = pipeline.name === DEFAULT_PIPELINE || pipeline.routes.some((r) => r.startsWith('/v1/'));
    if (servesV1 && !provided.has(CALLER)) {
      issues.push({ pointer: `${at}/plugins`, message: `pipeline "${pipeline.name}" serves /v1 routes but no plugin of it provides "${CALLER}"${suggest(CALLER)}; every /v1 endpoint requires a credential` });
    } else if (pipeline.routes.includes('/proxy') && !provided.has(CALLER)) {
      // The passthrough spends the gateway's provider credentials: never without a caller.
      issues.push({ pointer: `${at}/plugins`, message: `pipeline "${pipeline.name}" serves /proxy but no plugin of it provides "${CALLER}"${suggest(CALLER)}; the passthrough requires a credential` });
    }
  });
  return issues;
}

function modelIssues(config: GatewayConfig): SemanticIssue[] {
  const issues: SemanticIssue[] = [];
  const ids = new Map<string, number>();
  const configured = Object.keys(config.providers);
  const checkProvider = (pointer: string, slug: string) => {
    if (!config.providers[slug]) {
      issues.push({ pointer, message: `provider "${slug}" is not configured under providers (configured: ${configured.join(', ') || 'none'})` });
    }
  };
  config.models.forEach((model, i) => {
    const at = `/models/${i}`;
    if (ids.has(model.id)) issues.push({ pointer: `${at}/id`, message: `model id "${model.id}" is already declared at /models/${ids.get(model.id)}` });
    ids.set(model.id, i);
    if ((model.provider === undefined) === (model.targets === undefined)) {
      issues.push({ pointer: at, message: 'a model names either provider (one target) or targets (several), not both and not neither' });
      return;
    }
    if (model.provider !== undefined) checkProvider(`${at}/provider`, model.provider);
    model.targets?.forEach((t, j) => checkProvider(`${at}/targets/${j}/provider`, t.provider));
    if (model.strategy === 'single' && (model.targets?.length ?? 1) > 1) {
      issues.push({ pointer: `${at}/strategy`, message: 'strategy single takes one target; use fallback or loadbalance for several' });
    }
  });
  return issues;
}

function providerIssues(config: GatewayConfig, providers: ProviderRegistry): SemanticIssue[] {
  return Object.entries(config.providers).flatMap(([slug, block]) => {
    if (block.baseUrl) return [];
    const template = providers.get(slug)?.defaultBaseUrl;
    if (!template) return [{ pointer: `/providers/${slug}`, message: `provider "${slug}" has no default base URL: set baseUrl` }];
    const missing = missingPlaceholders(template, block.options);
    if (missing.length === 0) return [];
    return [{ pointer: `/providers/${slug}`, message: `provider "${slug}" fills its default base URL ${template} from options: set ${missing.map((m) => `options.${m}`).join(' and ')}, or set baseUrl` }];
  });
}
