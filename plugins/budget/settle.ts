/**
 * Work metered outside a request (a batch that ended: core/pipeline/metered.ts) is charged to every budget
 * that applies to its caller, exactly once per work id, with settleOnce (settle-once.ts): a settlement marker
 * `budget:settled:<work id>` and the amounts, in one atomic step, so the same work reported twice, or by two
 * instances at once, is charged once. There is nothing to reserve or refuse: the money is spent.
 *
 * Order, against the counters rebuilt from usage_records (ledger.ts): the usage plugin is registered before
 * this one, so by the time this runs the work's usage record is written. A counter that exists is added to; a
 * missing one is left missing, because rebuilding it now would read that record and adding the cost after
 * would count it twice: it is rebuilt, with the work in it, when next needed. The charge lands on the periods
 * holding the work's end, the time its usage record carries, so that charged and rebuilt counters agree.
 * Without the usage plugin a missing counter never learns of the work.
 */
import type { MeteredWork } from '../../core/pipeline/metered.ts';
import type { GatewayConfig } from '../../core/config/types.ts';
import { isPriced } from '../../core/canonical/pricing.ts';
import { audioSeconds, tokenCount } from '../../core/canonical/units.ts';
import type { BudgetService } from './budgets.ts';
import { costMicros } from './cost.ts';

/** Longer than any period a counter is charged for (a month and its day of grace) plus a late report. */
const MARKER_TTL_MS = 40 * 86_400_000;

export const settledMarker = (workId: string) => `budget:settled:${workId}`;

/**
 * The work's cost in micro-dollars at its model's pricing (enabled or not: the work ran), from the tokens as the
 * usage plugin counts them, so that its record rounds to the same amount; null for a model without a price.
 */
export function workMicros(config: Readonly<GatewayConfig>, work: MeteredWork): number | null {
  const pricing = work.model === null ? undefined : config.models.find((m) => m.id === work.model)?.pricing;
  if (!isPriced(pricing)) return null;
  const { usage } = work;
  return costMicros(pricing, {
    prompt_tokens: tokenCount(usage.prompt_tokens),
    completion_tokens: tokenCount(usage.completion_tokens),
    prompt_tokens_details: { cached_tokens: tokenCount(usage.prompt_tokens_details?.cached_tokens) },
    video_seconds: audioSeconds(work.videoSeconds),
    audio_seconds: audioSeconds(work.audioSeconds),
  });
}

export async function settleMeteredWork(budgets: BudgetService, config: Readonly<GatewayConfig>, work: MeteredWork): Promise<void> {
  const micros = workMicros(config, work);
  if (micros === null || micros === 0) return;
  const id = work.callerKind === 'api_key' ? work.apiKeyId : work.userId;
  const applicable = await budgets.applicable({
    kind: work.callerKind, id: id ?? '', tenantId: work.tenantId, organizationId: work.organizationId, departmentId: work.departmentId,
  });
  if (applicable.length === 0) return;
  await budgets.ledger.chargeOnce(applicable, micros, work.endedAt, settledMarker(work.id), MARKER_TTL_MS);
}
