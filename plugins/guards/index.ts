/**
 * guards: PII and secrets, prompt injection, toxic language and the operator's own detectors, on the prompt of
 * every chat-style request (chat, Messages, completions, Responses) and on its answer, streams included with an
 * explicit policy per guard (window, end, buffer). Blocks answer 400 GUARD_BLOCKED {guard, reason}; every finding
 * goes to gw.guardVerdicts (usage and audit keep them) without the matched text. docs/guards.md has the options.
 */
import { definePlugin } from '../../core/pipeline/plugin.ts';
import { configSchema, settingsFor, type GuardsConfig } from './config.ts';
import { loadDetectors } from './detectors.ts';
import { injectionScorer } from './injection.ts';
import { guardInput } from './input.ts';
import { checkResult } from './output.ts';
import { outputPlan, type EntryGuards } from './plan.ts';
import { Scanner } from './scan.ts';
import { streamStage } from './stream.ts';
import { RequestGuards } from './verdicts.ts';

export default definePlugin<GuardsConfig>({
  name: 'guards',
  description: 'Guards on chat, Messages, completions and Responses: PII and secrets (block, redact, log), prompt injection (scored), toxic language and pluggable detectors, on the prompt and on the answer (streams with a bounded window).',
  configSchema,
  async setup(config, services) {
    const entry: EntryGuards = {
      config,
      scanner: new Scanner(config),
      injection: injectionScorer(config.injection.patterns),
      detectors: await loadDetectors(config.detectors, services.config.source.dir),
      logger: services.logger,
    };
    return async (ctx, next) => {
      const gw = ctx.state.gw;
      if (gw.endpoint.kind !== 'dispatch') return next();
      const request = await gw.request();
      if (request.modality !== 'chat') return next();
      const settings = settingsFor(config, gw.caller);
      if (!settings.enabled) return next();
      const guards = new RequestGuards(gw, settings.pii.restore);
      await guardInput(entry, settings, guards, request, gw.signal, gw.requestId);

      if (request.stream) {
        const plan = outputPlan(entry, settings, guards, gw.signal, gw.requestId);
        if (plan.mode !== 'none' || plan.keepsFull) gw.stage(streamStage(plan));
      } else {
        gw.stage({ result: (result) => checkResult(entry, settings, guards, request, result, gw.signal, gw.requestId) });
      }
      await next();
    };
  },
});
