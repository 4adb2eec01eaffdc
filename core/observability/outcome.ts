/**
 * One record of a request's outcome, built once when its response closes: the access line and the metrics are
 * both written from it. Raw values (a model id as the caller sent it, a key id) stay in the record for the log;
 * the metrics take only their bounded labels (labels.ts).
 */
import type { Context } from 'koa';
import type { Usage } from '../canonical/chat.ts';
import { costUsd } from '../canonical/pricing.ts';
import { meteredAsAnswered, pricedUsage, tokenCount, type Metered } from '../canonical/units.ts';
import type { GatewayConfig, ModelConfig } from '../config/types.ts';
import { GatewayError } from '../errors.ts';
import { overriddenModel } from '../identity/policy.ts';
import type { GatewayState } from '../pipeline/context.ts';
import { upstreamMs } from './observed.ts';

export interface RequestOutcome {
  requestId: string;
  method: string;
  path: string;
  /** The matched route's path pattern (the endpoint table's path on the data plane), when a route matched. */
  route?: string;
  status: number;
  durationMs: number;
  /** The error code of an error answer. */
  code?: string;
  keyId?: string;
  tenant?: string;
  /** The configured model the request ran on (after policy overrides), else the model it named. */
  model?: string;
  provider?: string;
  /** The provider's HTTP status of an upstream error answer. */
  upstreamStatus?: number;
  /** An answer a provider served: its tokens, and its cost when the model is priced. */
  tokens?: { input: number; output: number };
  costUsd?: number;
  /** A dispatch route: the duration minus the time waiting on providers (observed.ts). */
  overheadMs?: number;
  upstreamMs?: number;
  firstTokenMs?: number;
  /** The pipeline and each plugin's own ms in it (-1: did not run). */
  pipeline?: string;
  pluginMs?: readonly number[];
  cache?: 'exact' | 'semantic';
  /** A limit's refusal: its error code and the level (a window's, a budget's scope) that refused. */
  refusal?: { code: string; level: string };
}

/** `started`, `ended`: performance.now() when the request arrived and when its response closed. */
export type OutcomeRecorder = (ctx: Context, started: number, ended: number) => RequestOutcome;

/** The error an answer carried: requestContext keeps it in ctx.state.error. */
function errorOf(ctx: Context): GatewayError | undefined {
  const error = (ctx.state as { error?: unknown }).error;
  return error instanceof GatewayError ? error : undefined;
}

function detail(error: GatewayError, name: string): unknown {
  const details = error.details;
  return details !== null && typeof details === 'object' && !Array.isArray(details) ? (details as Record<string, unknown>)[name] : undefined;
}

function refusalOf(error: GatewayError | undefined): RequestOutcome['refusal'] {
  if (error?.code === 'RATE_LIMIT_EXCEEDED') return { code: error.code, level: String(detail(error, 'level') ?? 'unknown') };
  if (error?.code === 'BUDGET_EXCEEDED') return { code: error.code, level: String(detail(error, 'scope') ?? 'unknown') };
  return undefined;
}

/**
 * What the answer used, as it says itself: nothing is counted here (an embeddings answer a plugin made without
 * usage has no tokens in the record; the usage plugin counts its input).
 */
function meteredOf(gw: GatewayState): Metered | null {
  if (gw.result) return meteredAsAnswered(gw.canonical, gw.result, gw.usageEstimated ?? false);
  const usage: Usage | null = gw.observed.streamUsage;
  if (!usage) return null;
  return { usage, searchUnits: 0, audioSeconds: 0, characters: 0, images: 0, videoSeconds: 0, estimated: gw.usageEstimated ?? false };
}

export function outcomeRecorder(config: Pick<GatewayConfig, 'models'>): OutcomeRecorder {
  const models = new Map<string, ModelConfig>(config.models.map((m) => [m.id, m]));
  return (ctx, started, ended) => {
    const durationMs = ended - started;
    const gw = ctx.state.gw as GatewayState | undefined;
    const error = ctx.status >= 400 ? errorOf(ctx) : undefined;
    const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
    const outcome: RequestOutcome = {
      requestId: ctx.state.requestId as string,
      method: ctx.method,
      path: ctx.path,
      status: ctx.status,
      durationMs,
    };
    if (gw) outcome.route = gw.endpoint.path;
    else if (typeof matched === 'string') outcome.route = matched;
    if (error) {
      outcome.code = error.code;
      const upstreamStatus = detail(error, 'upstreamStatus');
      if (typeof upstreamStatus === 'number') outcome.upstreamStatus = upstreamStatus;
      const refusal = refusalOf(error);
      if (refusal) outcome.refusal = refusal;
    }
    if (!gw) return outcome;
    const caller = gw.caller;
    if (caller?.kind === 'api_key') outcome.keyId = caller.id;
    if (caller) outcome.tenant = caller.tenantId;
    const requested = gw.target?.requestedModel ?? gw.canonical?.model;
    const model = requested === undefined ? undefined : caller ? overriddenModel(caller.policy, requested) : requested;
    if (model !== undefined) outcome.model = model;
    // A failed call has no target: its error names the provider it failed on.
    const provider = gw.target?.provider ?? (error ? detail(error, 'provider') : undefined);
    if (typeof provider === 'string') outcome.provider = provider;
    if (gw.servedFromCache) outcome.cache = gw.servedFromCache.kind;
    if (gw.endpoint.kind !== 'dispatch') return outcome;
    outcome.pipeline = gw.pipeline;
    outcome.pluginMs = gw.observed.pluginMs;
    const waited = upstreamMs(gw.observed, ended);
    outcome.overheadMs = Math.max(0, durationMs - waited);
    if (gw.observed.upstreamStart > 0) outcome.upstreamMs = waited;
    if (gw.observed.firstTokenMs >= 0) outcome.firstTokenMs = gw.observed.firstTokenMs;
    // Tokens and cost of what a provider served: a cached answer cost nothing upstream.
    if (gw.target && !gw.servedFromCache && ctx.status < 400) {
      const metered = meteredOf(gw);
      if (metered?.usage) outcome.tokens = { input: tokenCount(metered.usage.prompt_tokens), output: tokenCount(metered.usage.completion_tokens) };
      const cost = metered && model !== undefined ? costUsd(models.get(model)?.pricing, pricedUsage(metered)) : null;
      if (cost !== null) outcome.costUsd = cost;
    }
    return outcome;
  };
}

/** The access line's fields: only those that apply, durations to a tenth of a ms. */
export function accessFields(outcome: RequestOutcome): Record<string, unknown> {
  const round = (ms: number) => Math.round(ms * 10) / 10;
  const fields: Record<string, unknown> = {
    requestId: outcome.requestId, method: outcome.method, path: outcome.path, status: outcome.status, ms: round(outcome.durationMs),
  };
  if (outcome.code !== undefined) fields.code = outcome.code;
  if (outcome.keyId !== undefined) fields.keyId = outcome.keyId;
  if (outcome.tenant !== undefined) fields.tenant = outcome.tenant;
  if (outcome.model !== undefined) fields.model = outcome.model;
  if (outcome.provider !== undefined) fields.provider = outcome.provider;
  if (outcome.upstreamStatus !== undefined) fields.upstreamStatus = outcome.upstreamStatus;
  if (outcome.tokens !== undefined) fields.tokens = outcome.tokens;
  if (outcome.costUsd !== undefined) fields.cost = outcome.costUsd;
  if (outcome.overheadMs !== undefined) fields.overheadMs = round(outcome.overheadMs);
  if (outcome.cache !== undefined) fields.cache = outcome.cache;
  return fields;
}
