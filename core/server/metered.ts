/**
 * gateway.meterWork: reports work metered outside a request (core/pipeline/metered.ts) to every registered
 * plugin that takes it, in registration order: a plugin may rely on the ones registered before it having taken
 * the work. Every hook runs even when an earlier one failed, so that one plugin's outage does not hold back the
 * others; the call then rejects naming the plugins that failed, and the reporter tries again later (each hook is
 * idempotent per work.id).
 */
import type { Log } from '../log.ts';
import type { MeteredWork } from '../pipeline/metered.ts';
import type { AnyPluginDefinition, PluginServices } from '../pipeline/plugin.ts';

export type MeterWork = (work: MeteredWork) => Promise<void>;

export class MeteredWorkError extends AggregateError {
  constructor(readonly workId: string, readonly plugins: string[], errors: unknown[]) {
    const reasons = plugins.map((name, i) => `plugin "${name}": ${errors[i] instanceof Error ? (errors[i] as Error).message : String(errors[i])}`);
    super(errors, `metered work ${workId} was not taken by every plugin: ${reasons.join('; ')}`);
    this.name = 'MeteredWorkError';
  }
}

export function meteredWorkReporter(
  plugins: readonly AnyPluginDefinition[],
  services: PluginServices,
  shared: ReadonlyMap<string, unknown>,
  logger: Log,
): MeterWork {
  const takers = plugins.filter((p) => p.onMeteredWork);
  return async (work) => {
    const failed: string[] = [];
    const errors: unknown[] = [];
    for (const plugin of takers) {
      try {
        await plugin.onMeteredWork!(work, services, shared.get(plugin.name));
      } catch (err) {
        failed.push(plugin.name);
        errors.push(err);
        logger.warn({ err, plugin: plugin.name, workId: work.id, source: work.source }, `plugin "${plugin.name}" could not take metered work: it will be reported again`);
      }
    }
    if (failed.length > 0) throw new MeteredWorkError(work.id, failed, errors);
  };
}
