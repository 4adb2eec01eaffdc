/**
 * One chat call to one provider target: what the provider cannot do is refused before any I/O; the request is
 * built and goes through the shared exchange (exchange.ts); the answer comes back canonical, as gw.result or
 * gw.stream.
 */
import { chatRequestOf, type CanonicalChatRequest, type ChatCompletion, type ChatCompletionChunk, type ChatCompletionRequest } from '../canonical/chat.ts';
import { estimateUsage } from '../canonical/estimate.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import { hasFileParts } from './chat-files.ts';
import { canonicalChatStream, type ChatStreamInput } from './chat-stream.ts';
import { exchange, markRouted, unsupported, type CallDeps } from './exchange.ts';
import type { ChatTranslator, ProviderDefinition, ProviderTarget } from './provider.ts';
import type { UpstreamResponse } from './upstream.ts';
import { callSignal } from '../pipeline/abort.ts';

/** The provider's chat translator, once the request asks for nothing it lacks. */
export function chatTranslatorFor(provider: ProviderDefinition, request: ChatCompletionRequest, stream: boolean): ChatTranslator {
  const can = provider.capabilities.chat;
  if (!can || !provider.chat) throw unsupported(provider.slug, 'chat', { capability: 'chat' });
  if (stream && !can.stream) throw unsupported(provider.slug, 'streaming chat', { capability: 'stream' });
  if ((request.n ?? 1) > 1 && !can.n) throw unsupported(provider.slug, 'n > 1 (several choices per request)', { capability: 'n' });
  // Most requests name no tools: no lists made for them.
  const tools = request.tools;
  if (tools && tools.length > 0) {
    if (tools.some((t) => t.type === 'function') && !can.tools) throw unsupported(provider.slug, 'tools', { capability: 'tools' });
    const builtIn = tools.flatMap((t) => (t.type === 'built_in' ? [t.built_in] : []));
    const missing = builtIn.filter((name) => !(can.builtInTools ?? []).includes(name));
    if (missing.length > 0) throw unsupported(provider.slug, `the built-in tool${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`, { tools: missing });
  }
  const hasImage = request.messages.some((m) => Array.isArray(m.content) && m.content.some((p) => p.type === 'image_url'));
  if (hasImage && !can.vision) throw unsupported(provider.slug, 'image inputs', { capability: 'vision' });
  if (!can.files && hasFileParts(request)) throw unsupported(provider.slug, 'file inputs', { capability: 'files' });
  return provider.chat;
}

/** The dispatcher's capability check for a chat request (no I/O). */
export function checkChat(provider: ProviderDefinition, _target: ProviderTarget, request: CanonicalChatRequest): void {
  chatTranslatorFor(provider, request.body, request.stream);
}

/**
 * Pulls a stream's first chunk before the caller is answered. A stream that fails before it (an error event, a
 * frame too large, a close with nothing sent) fails the call as any upstream failure does: retried or passed to
 * the next target, or answered with its status, instead of a 200 that holds only an error event.
 */
export async function started(stream: AsyncGenerator<ChatCompletionChunk>): Promise<AsyncIterableIterator<ChatCompletionChunk>> {
  let first: IteratorResult<ChatCompletionChunk> | undefined = await stream.next();
  // The stream itself from its second chunk on: a generator around it would cost an asynchronous step per chunk.
  const iterator: AsyncIterableIterator<ChatCompletionChunk> = {
    next() {
      if (!first) return stream.next();
      const pulled = first;
      first = undefined;
      return Promise.resolve(pulled);
    },
    return(value?: unknown) {
      first = undefined;
      return stream.return(value);
    },
    throw(error?: unknown) {
      first = undefined;
      return stream.throw(error);
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}

/** A chat-shaped answer stream (a chat translator's, or a native completion's), started, as gw.stream. */
export async function startChatStream(
  ctx: GatewayContext, deps: CallDeps, response: UpstreamResponse, chat: ChatStreamInput['chat'], target: ProviderTarget, request: ChatCompletionRequest,
): Promise<void> {
  const gw = ctx.state.gw;
  gw.stream = await started(canonicalChatStream({
    response, chat, target, request, signal: gw.signal, maxFrameBytes: deps.upstream.maxFrameBytes, observed: gw.observed,
    onEstimated: () => {
      gw.usageEstimated = true;
    },
  }));
}

/** A whole chat-shaped answer as gw.result, its usage estimated when the provider gave none. */
export async function setChatResult(ctx: GatewayContext, request: ChatCompletionRequest, result: ChatCompletion): Promise<void> {
  const gw = ctx.state.gw;
  if (!result.usage) {
    const text = result.choices.map((c) => c.message.content ?? '').join('');
    result.usage = await estimateUsage(request, text);
    gw.usageEstimated = true;
  }
  gw.result = result;
}

/** `body`: the canonical body as this target gets it (its file parts naming the provider's ids); default the canonical one. */
export async function callChat(ctx: GatewayContext, deps: CallDeps, provider: ProviderDefinition, target: ProviderTarget, body?: ChatCompletionRequest): Promise<void> {
  const gw = ctx.state.gw;
  const canonical = chatRequestOf(gw.canonical!);
  const request = body ? { ...canonical, body } : canonical;
  const chat = chatTranslatorFor(provider, request.body, request.stream);
  const upstreamRequest = chat.toUpstream(request.body, target, request.stream);
  const followUp = chat.followUp?.bind(chat);
  const answer = await exchange(deps, provider, target, upstreamRequest, { stream: request.stream, ...(followUp ? { followUp } : {}) }, callSignal(gw));

  if ('stream' in answer) {
    await startChatStream(ctx, deps, answer.stream, chat, target, request.body);
    markRouted(ctx, target, request.model);
    return;
  }
  markRouted(ctx, target, request.model);
  await setChatResult(ctx, request.body, chat.fromUpstream(answer.body, target, request.body));
}
