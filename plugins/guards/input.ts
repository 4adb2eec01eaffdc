/**
 * The prompt, before dispatch: the match guards over every message's text (a block refuses the request, a
 * redaction rewrites every view of it: texts.ts), then the injection score over what users and tools wrote, then
 * the operator's detectors over that text as redacted (a remote classifier never gets what was redacted).
 */
import type { CanonicalChatRequest } from '../../core/canonical/chat.ts';
import type { EffectiveGuards } from './config.ts';
import { runDetectors } from './detectors.ts';
import type { EntryGuards } from './plan.ts';
import type { Finding } from './scan.ts';
import { messageTexts, rewriteRequest, UNTRUSTED_ROLES, type MessageText } from './texts.ts';
import type { RequestGuards } from './verdicts.ts';

export async function guardInput(
  entry: EntryGuards, settings: EffectiveGuards, guards: RequestGuards, request: CanonicalChatRequest, signal: AbortSignal, requestId: string,
): Promise<void> {
  const { config, scanner } = entry;
  const texts: MessageText[] = messageTexts(request.body.messages);
  if (request.legacy?.suffix) texts.push({ role: 'user', text: request.legacy.suffix });

  if (scanner.active(settings, 'input')) {
    const found = new Map<string, Finding[]>();
    let redacting = false;
    for (const { text } of texts) {
      if (found.has(text)) continue;
      const findings = scanner.scan(text, settings, 'input');
      found.set(text, findings);
      const blocked = findings.find((f) => f.action === 'block');
      if (blocked) throw guards.block(blocked.guard, blocked.type, 'input');
      guards.recordFindings(findings, 'input');
      if (findings.some((f) => f.action === 'redact')) redacting = true;
    }
    if (redacting) {
      // The other views (a legacy prompt, a native Responses body) hold the same words: scanned when not seen yet.
      rewriteRequest(request, (text) => guards.redact(text, found.get(text) ?? scanner.scan(text, settings, 'input'), 'input'));
    }
  }

  const untrusted = (): string => messageTexts(request.body.messages).filter((t) => UNTRUSTED_ROLES.has(t.role)).map((t) => t.text).join('\n');
  if (settings.injection.action !== 'off' && config.injection.directions.includes('input')) {
    const { score } = entry.injection(untrusted());
    if (score >= settings.injection.threshold) {
      if (settings.injection.action === 'block') throw guards.block('injection', 'injection', 'input', score);
      guards.record({ guard: 'injection', type: 'injection', action: 'log', direction: 'input', score });
    }
  }
  if (entry.detectors.some((d) => d.entry.directions.includes('input'))) {
    await runDetectors(entry.detectors, untrusted(), 'input', guards, signal, entry.logger, requestId);
  }
}
