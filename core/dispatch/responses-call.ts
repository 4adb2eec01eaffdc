/**
 * POST /v1/responses to a provider's native Responses API (a chat request carrying `native`, built by the
 * Responses ingress): the native body goes through the shared exchange (breaker, errors, abort), and the answer
 * comes back as canonical chat (gw.result, or chunks on gw.stream) for the plugins, with the native Response kept
 * for the record (rememberNativeAnswer). A provider that no longer knows the previous response gets the whole
 * stored conversation once instead. A target whose provider has no native API, or cannot take this request
 * natively, serves it through chat (chat-call.ts).
 */
import { chatRequestOf, type CanonicalChatRequest } from '../canonical/chat.ts';
import { chatCompletionOfNative, nativeResponseOf, rememberNativeAnswer } from '../canonical/responses-native.ts';
import { NativeStreamReader } from '../canonical/responses-native-stream.ts';
import { GatewayError } from '../errors.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import { setChatResult, startChatStream } from './chat-call.ts';
import { exchange, markRouted, type CallDeps } from './exchange.ts';
import type { ProviderDefinition, ProviderTarget } from './provider.ts';
import type { ResponsesTranslator } from './provider-responses.ts';
import { callSignal } from '../pipeline/abort.ts';

/**
 * The native translator serving this request on this target, or null for the chat path: the request has no
 * native body, the provider no Responses API (or not for streams), or the target turned it off
 * (`nativeResponses: false`, for a base URL that only serves chat).
 */
export function responsesTranslatorFor(provider: ProviderDefinition, target: ProviderTarget, request: CanonicalChatRequest): ResponsesTranslator | null {
  const can = provider.capabilities.responses;
  if (!request.native || !can || !provider.responses) return null;
  if (request.stream && !can.stream) return null;
  if ((target.options as { nativeResponses?: boolean }).nativeResponses === false) return null;
  return provider.responses;
}

export async function callResponses(ctx: GatewayContext, deps: CallDeps, provider: ProviderDefinition, target: ProviderTarget, translator: ResponsesTranslator): Promise<void> {
  const gw = ctx.state.gw;
  const request = chatRequestOf(gw.canonical!);
  const native = request.native!;
  const send = (body: Record<string, unknown>) => exchange(deps, provider, target, translator.toUpstream(body, target, request.stream), { stream: request.stream }, callSignal(gw));
  let answer: Awaited<ReturnType<typeof send>>;
  try {
    answer = await send(native.body);
  } catch (err) {
    const forgotten = native.fallback && err instanceof GatewayError && translator.forgotPrevious(err) && !gw.signal.aborted;
    if (!forgotten) throw err;
    answer = await send(native.fallback!);
  }

  if ('stream' in answer) {
    const reader = new NativeStreamReader(target.slug, target.upstreamModel);
    const decoder = {
      event: (event: { data: string }) => {
        const out = reader.event(event.data);
        if (reader.final) rememberNativeAnswer(request, reader.final);
        return out;
      },
      end: () => reader.end(),
    };
    await startChatStream(ctx, deps, answer.stream, { streamFormat: translator.streamFormat, streamDecoder: () => decoder }, target, request.body);
    markRouted(ctx, target, request.model);
    return;
  }
  markRouted(ctx, target, request.model);
  const response = nativeResponseOf(answer.body, target.slug);
  await setChatResult(ctx, request.body, chatCompletionOfNative(response, target.slug, target.upstreamModel));
  rememberNativeAnswer(request, response);
}
