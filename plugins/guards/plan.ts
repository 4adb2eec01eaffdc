/**
 * What one request's answer is checked for, by which guard and when: the entry's compiled guards with the
 * caller's settings applied. The stream stage (stream.ts) and the complete answer's check (output.ts) use it.
 */
import type { PluginLogger } from '../../core/pipeline/services.ts';
import type { EffectiveGuards, GuardsConfig, StreamPolicy } from './config.ts';
import { PII_TYPES } from './config.ts';
import { runDetectors, type LoadedDetector } from './detectors.ts';
import type { InjectionScore } from './injection.ts';
import type { Finding, Scanner } from './scan.ts';
import type { RequestGuards } from './verdicts.ts';
import type { PhraseHold, WindowLimits } from './window.ts';

/** The entry's compiled guards, built once in setup. */
export interface EntryGuards {
  config: GuardsConfig;
  scanner: Scanner;
  injection: (text: string) => InjectionScore;
  detectors: LoadedDetector[];
  logger: PluginLogger;
}

export interface OutputPlan {
  mode: 'none' | 'window' | 'buffer';
  guards: RequestGuards;
  limits: WindowLimits;
  /** The toxic phrases whose first words the window holds back; null when toxicity is not checked in the window. */
  phrases: PhraseHold | null;
  /** Whether digit runs are held (a spaced card, phone or IBAN number may be cut). */
  digits: boolean;
  /** Whether the whole text is kept for checks at the end. */
  keepsFull: boolean;
  scanWindow(text: string): Finding[];
  scoreBuffer(text: string): void;
  checkAtEnd(text: string): void;
  detectAfter(text: string): void;
}

/** The settings with the match guards not under `policies` turned off. */
function only(settings: EffectiveGuards, config: GuardsConfig, policies: readonly StreamPolicy[]): EffectiveGuards {
  const pii = policies.includes(config.pii.stream) ? settings.pii : { ...settings.pii, ...Object.fromEntries(PII_TYPES.map((t) => [t, 'off'])) };
  const toxicity = policies.includes(config.toxicity.stream) ? settings.toxicity : { action: 'off' as const };
  return { ...settings, pii, toxicity };
}

export function outputPlan(entry: EntryGuards, settings: EffectiveGuards, guards: RequestGuards, signal: AbortSignal, requestId: string): OutputPlan {
  const { config, scanner } = entry;
  const injectionOn = settings.injection.action !== 'off' && config.injection.directions.includes('output');
  const detectorsOn = entry.detectors.some((d) => d.entry.directions.includes('output'));
  const buffering = (scanner.active(only(settings, config, ['buffer']), 'output')) || (injectionOn && config.injection.stream === 'buffer');
  const held = buffering ? only(settings, config, ['window', 'buffer']) : only(settings, config, ['window']);
  const atEnd = only(settings, config, ['end']);
  const endActive = scanner.active(atEnd, 'output');
  const windowActive = scanner.active(held, 'output');
  const mode = buffering ? 'buffer' : windowActive || guards.restores ? 'window' : 'none';
  const injection = (text: string, blocking: boolean) => {
    const { score } = entry.injection(text);
    if (score < settings.injection.threshold) return;
    if (blocking && settings.injection.action === 'block') throw guards.block('injection', 'injection', 'output', score);
    guards.record({ guard: 'injection', type: 'injection', action: 'log', direction: 'output', score });
  };
  return {
    mode,
    guards,
    limits: config.window,
    phrases: held.toxicity.action !== 'off' && scanner.toxicity.maxWords > 1 ? scanner.toxicity : null,
    digits: PII_TYPES.some((t) => held.pii[t] !== 'off'),
    keepsFull: endActive || (injectionOn && config.injection.stream === 'end') || detectorsOn,
    scanWindow: (text) => scanner.scan(text, held, 'output'),
    scoreBuffer(text) {
      if (injectionOn && config.injection.stream === 'buffer') injection(text, true);
    },
    checkAtEnd(text) {
      if (endActive) guards.recordFindings(scanner.scan(text, atEnd, 'output'), 'output', 'log');
      if (injectionOn && config.injection.stream === 'end') injection(text, false);
    },
    detectAfter(text) {
      if (!detectorsOn) return;
      // Recording only: errors are logged by runDetectors, and a block cannot take back what was sent.
      // What the caller got redacted is redacted for the detectors too.
      const redacted = guards.redact(text, scanner.scan(text, settings, 'output'), 'output');
      void runDetectors(entry.detectors, redacted, 'output', guards, signal, entry.logger, requestId, false).catch(() => {});
    },
  };
}
