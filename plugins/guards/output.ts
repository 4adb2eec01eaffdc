/**
 * A complete answer: every guard that looks at output checks each choice's text whole, whatever its stream
 * policy, and may block (the caller gets 400 GUARD_BLOCKED instead of the answer). A Responses answer served by a
 * provider's native API is given back verbatim by the ingress, so its output text is rewritten the same way.
 */
import type { CanonicalChatRequest, CanonicalResult, ChatCompletion } from '../../core/canonical/chat.ts';
import { nativeAnswerOf, rememberNativeAnswer, type NativeResponse } from '../../core/canonical/responses-native.ts';
import type { EffectiveGuards } from './config.ts';
import { runDetectors } from './detectors.ts';
import type { EntryGuards } from './plan.ts';
import type { RequestGuards } from './verdicts.ts';

export async function checkResult(
  entry: EntryGuards, settings: EffectiveGuards, guards: RequestGuards, request: CanonicalChatRequest, result: CanonicalResult,
  signal: AbortSignal, requestId: string,
): Promise<CanonicalResult | void> {
  if (result.object !== 'chat.completion') return;
  const { config, scanner } = entry;
  const matching = scanner.active(settings, 'output');
  const injectionOn = settings.injection.action !== 'off' && config.injection.directions.includes('output');
  const texts = result.choices.map((c) => (typeof c.message.content === 'string' ? c.message.content : ''));
  const all = texts.join('\n');
  if (injectionOn) {
    const { score } = entry.injection(all);
    if (score >= settings.injection.threshold) {
      if (settings.injection.action === 'block') throw guards.block('injection', 'injection', 'output', score);
      guards.record({ guard: 'injection', type: 'injection', action: 'log', direction: 'output', score });
    }
  }
  // Redacted first (what a detector may see: a remote classifier never gets what was redacted), then restored.
  const redacted = texts.map((text) => {
    if (!matching) return text;
    const findings = scanner.scan(text, settings, 'output');
    const blocked = findings.find((f) => f.action === 'block');
    if (blocked) throw guards.block(blocked.guard, blocked.type, 'output');
    guards.recordFindings(findings, 'output');
    return guards.redact(text, findings, 'output');
  });
  await runDetectors(entry.detectors, redacted.join('\n'), 'output', guards, signal, entry.logger, requestId);
  const rewritten = redacted.map((text) => guards.restore(text));
  if (rewritten.every((text, i) => text === texts[i])) return;
  const native = nativeAnswerOf(request);
  if (native) rememberNativeAnswer(request, { ...native, output: native.output.map((item) => rewriteOutputItem(item, (t) => guards.restore(guards.redact(t, matching ? scanner.scan(t, settings, 'output') : [], 'output')))) } as NativeResponse);
  const answer: ChatCompletion = { ...result, choices: result.choices.map((c, i) => (typeof c.message.content === 'string' ? { ...c, message: { ...c.message, content: rewritten[i]! } } : c)) };
  return answer;
}

function rewriteOutputItem(item: unknown, map: (text: string) => string): unknown {
  const message = item as { type?: string; content?: unknown };
  if (message?.type !== 'message' || !Array.isArray(message.content)) return item;
  return {
    ...message,
    content: message.content.map((part: { type?: string; text?: unknown }) => (part?.type === 'output_text' && typeof part.text === 'string' ? { ...part, text: map(part.text) } : part)),
  };
}
