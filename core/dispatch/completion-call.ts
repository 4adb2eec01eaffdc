/**
 * A legacy completion (a chat request carrying `legacy`, see core/canonical/completion.ts) to one target: to the
 * provider's native completions API when it declares `completion`, else through its chat API as any chat
 * request. What only the native API can do (suffix, best_of above 1, an integer logprobs) makes a target
 * without it refuse before any I/O, so fallback skips it and the caller hears of it only when no target has it.
 */
import { chatOnlyField, legacyRequestOf, markServedNatively, nativeOnlyField } from '../canonical/completion.ts';
import type { CanonicalChatRequest } from '../canonical/chat.ts';
import { chatRequestOf } from '../canonical/chat.ts';
import { GatewayError } from '../errors.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import { callChat, checkChat, setChatResult, startChatStream } from './chat-call.ts';
import { exchange, markRouted, type CallDeps } from './exchange.ts';
import type { CompletionTranslator, ProviderDefinition, ProviderTarget } from './provider.ts';
import { callSignal } from '../pipeline/abort.ts';

const WHY: Record<'suffix' | 'best_of' | 'logprobs', string> = {
  suffix: 'suffix is not supported',
  best_of: 'best_of above 1 is not supported',
  logprobs: 'logprobs as an integer (legacy log probabilities) is not supported',
};

/** The native translator serving this request on this provider, or null for its chat API; a refusal otherwise. */
export function completionTranslatorFor(provider: ProviderDefinition, request: CanonicalChatRequest): CompletionTranslator | null {
  const legacy = request.legacy!;
  const can = provider.capabilities.completion;
  const chatOnly = chatOnlyField(request.body);
  if (can && provider.completion && !chatOnly && (!request.stream || can.stream !== false)) return provider.completion;
  const field = nativeOnlyField(legacy);
  if (!field) return null;
  const details = { provider: provider.slug, field, capability: 'completion' };
  if (can && provider.completion && chatOnly) {
    throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `${field} cannot be sent with ${chatOnly}: ${field} needs the legacy completions API of ${provider.slug}, ${chatOnly} its chat API`, details);
  }
  throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `${WHY[field]} by provider ${provider.slug}: it has no legacy completions API, and its chat API cannot honour ${field}`, details);
}

export function checkCompletion(provider: ProviderDefinition, target: ProviderTarget, request: CanonicalChatRequest): void {
  if (completionTranslatorFor(provider, request) === null) checkChat(provider, target, request);
}

export async function callCompletion(ctx: GatewayContext, deps: CallDeps, provider: ProviderDefinition, target: ProviderTarget): Promise<void> {
  const gw = ctx.state.gw;
  const request = chatRequestOf(gw.canonical!);
  const translator = completionTranslatorFor(provider, request);
  if (!translator) return callChat(ctx, deps, provider, target);
  const legacyRequest = legacyRequestOf(request, request.legacy!);
  const answer = await exchange(deps, provider, target, translator.toUpstream(legacyRequest, target, request.stream), { stream: request.stream }, callSignal(gw));
  if ('stream' in answer) await startChatStream(ctx, deps, answer.stream, translator, target, request.body);
  else await setChatResult(ctx, request.body, translator.fromUpstream(answer.body, target, legacyRequest));
  markRouted(ctx, target, request.model);
  markServedNatively(request);
}
