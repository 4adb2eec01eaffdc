/**
 * Metric labels bounded by construction: every value comes from a set fixed when the gateway starts (the endpoint
 * table, config.models, config.providers, fixed enums) or is `other`. A caller can name any model or path; none
 * of what it sends becomes a label of its own, and key ids, users and tenants never do.
 */
import type { GatewayConfig } from '../config/types.ts';

export const OTHER = 'other';

/** The levels a limit refusal names: ratelimit's windows and budget's scopes. */
export const REFUSAL_LEVELS: ReadonlySet<string> = new Set(['ip', 'apiKey', 'tenant', 'deployment', 'organization', 'department', 'key']);

export interface LabelBounds {
  /** A path pattern of the routes the gateway registered, or `other`. */
  route(pattern: string | undefined): string;
  /** A model id from config.models, or `other`. */
  model(id: string | undefined): string;
  /** A configured provider slug, or `other`. */
  provider(slug: string | undefined): string;
  /** A provider slug for an upstream origin (scheme://host:port) of a configured provider, or `other`. */
  origin(origin: string): string;
}

const bounded = (known: ReadonlySet<string>) => (value: string | undefined): string => (value !== undefined && known.has(value) ? value : OTHER);

/**
 * `routes`: the path patterns registered (data plane, admin, health). `defaultBaseUrl`: a provider's base URL
 * when its config names none, so that its origin is known too.
 */
export function labelBounds(config: GatewayConfig, routes: Iterable<string>, defaultBaseUrl: (slug: string) => string | undefined): LabelBounds {
  const providers = new Set(Object.keys(config.providers));
  const origins = new Map<string, string>();
  const addOrigin = (baseUrl: string | undefined, slug: string) => {
    if (!baseUrl) return;
    try {
      const origin = new URL(baseUrl).origin;
      if (!origins.has(origin)) origins.set(origin, providers.has(slug) ? slug : OTHER);
    } catch {
      // a base URL the loader accepted always parses; nothing to label otherwise
    }
  };
  for (const [slug, provider] of Object.entries(config.providers)) addOrigin(provider.baseUrl ?? defaultBaseUrl(slug), slug);
  return {
    route: bounded(new Set(routes)),
    model: bounded(new Set(config.models.map((m) => m.id))),
    provider: bounded(providers),
    origin: (origin) => origins.get(origin) ?? OTHER,
  };
}
