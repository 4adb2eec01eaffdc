/**
 * The operator's own scored detectors (a model-based injection classifier, a moderation API): modules named in
 * the entry's `detectors`, resolved from the config file's folder as plugins are. A module's default export is
 * a detector, or a function of the entry's `options` that returns one (or a promise of one):
 *
 *   export default { name: 'my-classifier', async detect(text, { signal, direction }) { return { score: 0.93, reason: 'injection' }; } };
 *
 * Each call is bounded by the entry's timeoutMs and the request's signal; an error or a timeout goes by the
 * entry's failMode (open: pass, verdict `detector_error` logged; closed: GUARD_BLOCKED reason detector_error),
 * and is logged (at most once a minute per detector, with the count).
 */
import { importDefinitions } from '../../core/pipeline/modules.ts';
import type { PluginLogger } from '../../core/pipeline/services.ts';
import { LogThrottle } from '../../core/log-throttle.ts';
import type { DetectorEntry, Direction } from './config.ts';
import type { RequestGuards } from './verdicts.ts';

export interface DetectorContext { signal: AbortSignal; direction: Direction }
export interface DetectorResult { score: number; reason?: string }

export interface GuardDetector {
  /** The verdicts' `guard`: lower-case letters, digits, - and _. */
  name: string;
  detect(text: string, context: DetectorContext): Promise<DetectorResult>;
}

export interface LoadedDetector {
  detector: GuardDetector;
  entry: DetectorEntry;
  throttle: LogThrottle;
}

const NAME = /^[a-z][a-z0-9_-]{0,62}$/;
const WARN_EVERY_MS = 60_000;

function asDetector(value: unknown, module: string): GuardDetector {
  const d = value as Partial<GuardDetector> | null;
  if (!d || typeof d !== 'object' || typeof d.name !== 'string' || !NAME.test(d.name) || typeof d.detect !== 'function') {
    throw new Error(`guards: detector module "${module}" must export { name: /^[a-z][a-z0-9_-]*$/, detect(text, context) } or a function returning it`);
  }
  return d as GuardDetector;
}

export async function loadDetectors(entries: readonly DetectorEntry[], configDir: string): Promise<LoadedDetector[]> {
  const loaded: LoadedDetector[] = [];
  for (const entry of entries) {
    const [exported] = await importDefinitions(entry.module, configDir);
    const made = typeof exported === 'function' ? await (exported as (options: unknown) => unknown)(entry.options) : exported;
    loaded.push({ detector: asDetector(made, entry.module), entry, throttle: new LogThrottle(WARN_EVERY_MS) });
  }
  return loaded;
}

class DetectorTimeout extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

/** One detector's score, or the error it failed with (a timeout included). */
async function scoreOf(loaded: LoadedDetector, text: string, direction: Direction, signal: AbortSignal): Promise<DetectorResult> {
  const { detector, entry } = loaded;
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  try {
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const err = new DetectorTimeout(entry.timeoutMs);
        controller.abort(err);
        reject(err);
      }, entry.timeoutMs);
    });
    const result = await Promise.race([detector.detect(text, { signal: controller.signal, direction }), late]);
    if (!result || typeof result.score !== 'number' || !Number.isFinite(result.score)) throw new Error('detect() did not resolve to { score: number }');
    return result;
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Runs the detectors that look at `direction` on the text, one after another in config order. Throws the
 * GUARD_BLOCKED error of the first that blocks; records every verdict.
 */
export async function runDetectors(
  detectors: readonly LoadedDetector[], text: string, direction: Direction, guards: RequestGuards, signal: AbortSignal,
  logger: PluginLogger, requestId: string, blocking = true,
): Promise<void> {
  for (const loaded of detectors) {
    const { detector, entry } = loaded;
    if (!entry.directions.includes(direction) || text === '') continue;
    let result: DetectorResult;
    try {
      result = await scoreOf(loaded, text, direction, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      const events = loaded.throttle.due();
      if (events !== null) {
        logger.warn({ err, requestId, detector: detector.name, direction, failMode: entry.failMode, events },
          `guards: detector "${detector.name}" failed (failMode ${entry.failMode})`);
      }
      if (entry.failMode === 'closed' && blocking) throw guards.block(detector.name, 'detector_error', direction);
      guards.record({ guard: detector.name, type: 'detector_error', action: 'log', direction });
      continue;
    }
    const score = Math.min(1, Math.max(0, result.score));
    if (score < entry.threshold) continue;
    const reason = result.reason && NAME.test(result.reason) ? result.reason : detector.name;
    if (entry.action === 'block' && blocking) throw guards.block(detector.name, reason, direction, score);
    guards.record({ guard: detector.name, type: reason, action: 'log', direction, score });
  }
}
