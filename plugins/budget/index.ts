/**
 * budget: USD budgets per deployment (tenant), organization, department and API key, daily, monthly or total
 * (budgets.ts, ledger.ts). A request (chat, embeddings or rerank, priced per modality: plugins/budget/cost.ts) reserves
 * its estimated cost on every budget that applies before it is dispatched, and is refused with 402
 * BUDGET_EXCEEDED when it does not fit in one of them; afterwards the reservation is settled to the real cost
 * (streams included). Work metered outside a request (a batch) is charged once it ends, exactly once (settle.ts).
 * See docs/limits.md#budgets.
 */
import { fileURLToPath } from 'node:url';
import type { JsonSchema } from '../../core/json-schema.ts';
import { GatewayError } from '../../core/errors.ts';
import type { StreamOutcome } from '../../core/pipeline/context.ts';
import { definePlugin } from '../../core/pipeline/plugin.ts';
import { StoreGuard } from '../../core/pipeline/store-guard.ts';
import { lateOutcome } from '../../core/store/deadline.ts';
import { budgetAdminRoutes } from './admin-routes.ts';
import { BudgetService } from './budgets.ts';
import { answerMicros, costMicros, estimateMicros, modelPrice } from './cost.ts';
import { budgetEndpoint } from './endpoint.ts';
import type { ApplicableBudget, Reservation, ReserveOutcome } from './ledger.ts';
import { usd } from './periods.ts';
import { settleMeteredWork } from './settle.ts';

export interface BudgetPluginConfig {
  onStoreError: 'open' | 'closed';
  storeTimeoutMs: number;
  unpricedModels: 'allow' | 'refuse';
  defaultCompletionTokens: number;
}

const configSchema: JsonSchema = {
  type: 'object', additionalProperties: false,
  properties: {
    onStoreError: {
      type: 'string', enum: ['open', 'closed'], default: 'closed',
      description: 'When the KV or the database fails or does not answer within storeTimeoutMs: "closed" refuses budgeted requests with 503 STORE_UNAVAILABLE (overspending money is worse than refusing), "open" lets them through unchecked.',
    },
    storeTimeoutMs: { type: 'integer', minimum: 1, default: 2000, description: 'How long one store call may take before it counts as a store error.' },
    unpricedModels: {
      type: 'string', enum: ['allow', 'refuse'], default: 'allow',
      description: 'A model without pricing, for a caller under a budget: "allow" lets it through and counts nothing (logged once per model), "refuse" answers 403 MODEL_NOT_ALLOWED.',
    },
    defaultCompletionTokens: {
      type: 'integer', minimum: 0, default: 1024,
      description: 'Completion tokens reserved per choice when the request sets neither max_completion_tokens nor max_tokens and the model has no max_output_tokens.',
    },
  },
};

/** The most unpriced model ids remembered (to log each once); past it, old ones may be logged again. */
const WARNED_LIMIT = 1000;

const SCOPE_NAMES: Record<ApplicableBudget['scope'], string> = {
  deployment: 'deployment', organization: 'organization', department: 'department', key: 'API key',
};

const dollars = (micros: number) => `$${usd(micros).toFixed(6)}`;

function exceeded(budget: ApplicableBudget, spentMicros: number, estimateMicros: number): GatewayError {
  const left = Math.max(budget.limitMicros - spentMicros, 0);
  return new GatewayError(
    'BUDGET_EXCEEDED',
    `Budget exceeded: the ${budget.period} ${SCOPE_NAMES[budget.scope]} budget has ${dollars(left)} of ${dollars(budget.limitMicros)} left, and this request may cost up to ${dollars(estimateMicros)}`,
    { scope: budget.scope, scopeId: budget.scopeId, limit: usd(budget.limitMicros), spent: usd(spentMicros), period: budget.period },
  );
}

/** A stream's cost: its reported usage; without one the estimate stands, unless it failed before any chunk. */
function streamMicros(outcome: StreamOutcome, cost: (usage: NonNullable<StreamOutcome['usage']>) => number, estimate: number): number {
  if (outcome.usage) return cost(outcome.usage);
  return outcome.status === 'failed' && outcome.chunks === 0 ? 0 : estimate;
}

export default definePlugin<BudgetPluginConfig, BudgetService>({
  name: 'budget',
  description: 'USD budgets per deployment, organization, department and API key (daily, monthly or total): requests reserve their estimated cost and settle to the real one; 402 BUDGET_EXCEEDED.',
  configSchema,
  requires: ['caller'],
  // The budgets table; spend lives in KV counters, rebuilt from the usage plugin's records when one is missing.
  migrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  endpoints: [budgetEndpoint],
  adminRoutes: budgetAdminRoutes,
  // One service per gateway: its budget-list cache is shared by every entry, GET /v1/budget and the admin routes.
  init: (services) => new BudgetService(services.db, services.kv, () => services.clock.now(), services.config.auth.keyCacheTtlMs, services.logger),
  onMeteredWork: (work, services, budgets) => settleMeteredWork(budgets, services.config, work),
  setup(config, services, budgets) {
    const guard = new StoreGuard({
      plugin: 'budget', timeoutMs: config.storeTimeoutMs, mode: config.onStoreError, logger: services.logger,
      messages: {
        timeout: 'the store did not answer',
        failed: `budget: a store failed; budgeted requests are ${config.onStoreError === 'open' ? 'let through unchecked' : 'refused with 503'} until it answers`,
        recovered: 'budget: the stores answer again',
      },
    });
    const closed = config.onStoreError === 'closed';
    const storeUnavailable = () => new GatewayError(
      'STORE_UNAVAILABLE', 'Budgets cannot be checked: the shared store did not answer', { plugin: 'budget' }, { 'Retry-After': '1' });
    const warned = new Set<string>();

    return async (ctx, next) => {
      const gw = ctx.state.gw;
      // Local endpoints (models, usage, the passthrough) carry no priced request. A realtime session is priced
      // when it closes (its metered work); it is only not opened on a budget already spent.
      const opensSession = gw.endpoint.capability === 'realtime' && ctx.method === 'POST';
      if (gw.endpoint.kind !== 'dispatch' && !opensSession) return next();
      const caller = gw.caller;
      if (!caller) throw new GatewayError('AUTH_REQUIRED', 'Authentication required: send Authorization: Bearer <API key>');
      // Which budgets apply needs only the caller: a caller without any is let through before its body is read.
      // The list comes from the database when the KV fails, so only a database failure lands in this catch.
      let applicable: readonly ApplicableBudget[];
      try {
        // Within the call on the in-process KV (every list cached): no promise, no timer.
        const found = guard.run('budgets', () => budgets.applicable(caller));
        applicable = found instanceof Promise ? await found : found;
      } catch {
        if (closed) throw storeUnavailable();
        return next();
      }
      if (applicable.length === 0) return next();
      if (opensSession) {
        // Cost 0 fits unless a budget is over its limit already; nothing is held, so nothing is given back.
        let outcome: Awaited<ReturnType<typeof budgets.ledger.reserve>>;
        try {
          outcome = await guard.run('reserve', () => budgets.ledger.reserve(applicable, 0, services.clock.now()));
        } catch {
          if (closed) throw storeUnavailable();
          return next();
        }
        if (!outcome.ok) throw exceeded(outcome.budget, outcome.spentMicros, 0);
        return next();
      }

      // Read already by a plugin before this one (ratelimit's token estimate), most often: no await then.
      const request = gw.canonical ?? await gw.request();
      const price = modelPrice(services.config, caller.policy, request.model);
      // An unknown or disallowed model is refused by routing; nothing is reserved for it.
      if (price.kind === 'unroutable') return next();

      if (price.kind === 'unpriced') {
        if (!warned.has(price.modelId)) {
          if (warned.size >= WARNED_LIMIT) warned.clear();
          warned.add(price.modelId);
          services.logger.warn({ plugin: 'budget', model: price.modelId, unpricedModels: config.unpricedModels },
            `budget: model "${price.modelId}" has no pricing: requests for it ${config.unpricedModels === 'allow' ? 'count nothing against budgets' : 'are refused for callers under a budget'}`);
        }
        if (config.unpricedModels === 'refuse') {
          throw new GatewayError('MODEL_NOT_ALLOWED', `Model "${price.modelId}" has no pricing, and a budget applies to this caller`, { model: price.modelId, reason: 'unpriced' });
        }
        return next();
      }

      const estimating = estimateMicros(price, request, config.defaultCompletionTokens);
      const estimate = typeof estimating === 'number' ? estimating : await estimating;
      let reservation: Reservation;
      // On the in-process KV the reservation is made within the call; elsewhere it is a call that may time out.
      let reserving: ReserveOutcome | Promise<ReserveOutcome> | undefined;
      try {
        const made = guard.run('reserve', () => (reserving = budgets.ledger.reserve(applicable, estimate, services.clock.now())));
        const outcome = made instanceof Promise ? await made : made;
        if (!outcome.ok) throw exceeded(outcome.budget, outcome.spentMicros, estimate);
        reservation = outcome.reservation;
      } catch (err) {
        // The refusal of the budget itself; a store that failed (STORE_UNAVAILABLE included) is onStoreError's.
        if (err instanceof GatewayError && err.code !== 'STORE_UNAVAILABLE') throw err;
        // Timed out: should the reservation still complete, a refused request gives it back; a request let
        // through (open) keeps it as its charge.
        if (closed) {
          const call = reserving as ReserveOutcome | Promise<ReserveOutcome> | undefined;
          if (call instanceof Promise) {
            void lateOutcome(call).then((late) => (late?.ok ? guard.quiet('give back', () => budgets.ledger.settle(late.reservation, 0)) : undefined));
          }
          throw storeUnavailable();
        }
        return next();
      }

      let settled = false;
      // Done when it returns on the in-process KV; a promise otherwise.
      const settle = (micros: number): void | Promise<void> => {
        if (settled) return;
        settled = true;
        return guard.quiet('settle', () => budgets.ledger.settle(reservation, micros));
      };
      try {
        await next();
      } catch (err) {
        // Refused later in the pipeline or by the provider before any answer: nothing was generated.
        await settle(0);
        throw err;
      }
      // Answered by a later plugin (a cache hit) without calling a provider: it cost nothing.
      if (!gw.target || gw.servedFromCache) return settle(0);
      const cost = (usage: Parameters<typeof costMicros>[1]) => costMicros(price.pricing, usage);
      if (gw.stream) {
        gw.stage({ complete: (outcome) => void settle(streamMicros(outcome, cost, estimate)) });
        return;
      }
      const answered = answerMicros(price.pricing, request, gw.result, estimate);
      const settling = settle(typeof answered === 'number' ? answered : await answered);
      if (settling) await settling;
    };
  },
});
