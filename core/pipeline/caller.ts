/** Who is calling: what the identity services hand to plugins (the auth plugin sets it on gw.caller). */

export type Credential = { kind: 'api_key'; value: string } | { kind: 'jwt'; value: string };

export interface RateLimits {
  requestsPerMinute?: number;
  requestsPerDay?: number;
  tokensPerDay?: number;
}

/** The policy a caller is under: its organization's narrowed by its department's. */
export interface EffectivePolicy {
  /** Every allow-list that applies; a model must be in all of them. */
  allowLists: ReadonlyArray<ReadonlySet<string>>;
  /** Overrides, most specific level first. */
  overrides: ReadonlyArray<Readonly<Record<string, string>>>;
  rateLimits: RateLimits;
}

export interface Caller {
  kind: 'api_key' | 'jwt';
  /** The key id or the JWT subject. */
  id: string;
  tenantId: string;
  organizationId: string | null;
  departmentId: string | null;
  capabilities: readonly string[];
  /** The key's address allow-list (single addresses and CIDR ranges); empty means unrestricted. */
  allowedIps: readonly string[];
  /** The key's own rate limits (its record's rate_limits); null for JWT callers and keys without limits. */
  rateLimits: RateLimits | null;
  /** The JWT's role claim (`admin` may use /admin/v1); null for API keys. */
  role: string | null;
  /** The organization's policy narrowed by the department's: model allow-lists, overrides, rate limits. */
  policy: EffectivePolicy;
}

/** A plugin's overrides keyed by organization, department and API key id (rag, guards). */
export interface CallerOverrides<T> {
  organizations: Record<string, T>;
  departments: Record<string, T>;
  keys: Record<string, T>;
}

/** The overrides that apply to a caller, least specific first (organization, department, key): later ones win. */
export function callerOverrides<T>(overrides: CallerOverrides<T>, caller: Caller | undefined): T[] {
  const found: Array<T | undefined> = [];
  if (caller?.organizationId) found.push(overrides.organizations[caller.organizationId]);
  if (caller?.departmentId) found.push(overrides.departments[caller.departmentId]);
  if (caller?.kind === 'api_key') found.push(overrides.keys[caller.id]);
  return found.filter((level): level is T => level !== undefined);
}
