/**
 * ratelimit: sliding-window limits per client address (ip), per API key (apiKey) and per tenant (tenant, the
 * deployment's limits narrowed by the caller's policy), in that order, on the KV's clock so that every instance
 * sharing a Redis shares each window. A request's windows are admitted in one atomic KV call, all or nothing.
 * Token limits reserve an estimate before the call and settle to the real usage after it, streams included.
 * Metered work (realtime sessions, batches, the gateway's own embeddings) adds its tokens once (metered.ts).
 * See docs/limits.md.
 */
import { definePlugin } from '../../core/pipeline/plugin.ts';
import { admitAll, mostConstraining, setWindowHeaders, settleAll } from './admit.ts';
import { configSchema, type RateLimitConfig } from './config.ts';
import { PlanCache } from './plan.ts';
import { StoreGuard } from '../../core/pipeline/store-guard.ts';
import { TokenReservation } from './tokens.ts';
import { addMeteredWork, type RateLimitShared } from './metered.ts';

export default definePlugin<RateLimitConfig, RateLimitShared>({
  name: 'ratelimit',
  description: 'Sliding-window request and token limits per client address, per API key and per tenant (narrowed by organization and department policy); 429 RATE_LIMIT_EXCEEDED.',
  configSchema,
  init: () => ({ entries: [] }),
  onMeteredWork: (work, services, shared) => addMeteredWork(work, services, shared),
  setup(config, services, shared) {
    const guard = new StoreGuard({
      plugin: 'ratelimit', timeoutMs: config.storeTimeoutMs, mode: config.onStoreError, logger: services.logger,
      messages: {
        timeout: 'the KV did not answer',
        failed: `ratelimit: the KV failed; requests are ${config.onStoreError === 'open' ? 'let through unlimited' : 'refused with 503'} until it answers`,
        recovered: 'ratelimit: the KV answers again',
      },
    });
    const closed = config.onStoreError === 'closed';
    shared.entries.push({ config, guard });
    const plans = new PlanCache(config);

    return async (ctx, next) => {
      const gw = ctx.state.gw;
      const planned = plans.plan(gw);
      if (planned.length === 0) return next();

      const tokens = new TokenReservation(gw, config.tokenEstimate.completionTokens);
      const { kv } = services;
      const admitting = admitAll(kv, guard, planned, tokens, closed);
      // Awaited only when it is a promise: an await on a value still suspends the middleware for a microtask.
      const { admitted, storeFailed } = admitting instanceof Promise ? await admitting : admitting;
      const shown = storeFailed ? undefined : mostConstraining(admitted);
      if (shown) setWindowHeaders(ctx, shown);

      const tokenWindows = admitted.filter((w) => w.name === 'tokensPerDay');
      if (tokenWindows.length === 0) return next();
      let settled = false;
      // Done when it returns on the in-process KV; a promise otherwise.
      const settle = (used: number): void | Promise<void> => {
        if (settled) return;
        settled = true;
        return settleAll(kv, guard, tokenWindows, used);
      };
      try {
        await next();
      } catch (err) {
        // Refused later in the pipeline or by the upstream before any answer: nothing was generated.
        await settle(0);
        throw err;
      }
      if (gw.stream) {
        gw.stage({ complete: (outcome) => void settle(outcome.usage?.total_tokens ?? tokens.prompt) });
        return;
      }
      const usage = gw.result && 'usage' in gw.result ? gw.result.usage : undefined;
      // Speech, images and video are billed by other units: their usage may have no tokens.
      const settling = settle(usage && 'total_tokens' in usage && usage.total_tokens !== undefined ? usage.total_tokens : tokens.prompt);
      if (settling) await settling;
    };
  },
});
