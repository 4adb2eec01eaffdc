/**
 * One chat call to one provider target: what the provider cannot do is refused before any I/O; the request is
 * built, authorized, sent through the upstream's breaker (with any follow-ups a multi-step provider needs), and
 * the answer comes back canonical, as gw.result or gw.stream.
 */
import { chatRequestOf, type ChatCompletionChunk, type ChatCompletionRequest } from '../canonical/chat.ts';
import { estimateUsage } from '../canonical/estimate.ts';
import { GatewayError } from '../errors.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import type { Breakers } from './breakers.ts';
import { canonicalChatStream } from './chat-stream.ts';
import type { ChatTranslator, ProviderDefinition, ProviderIO, ProviderTarget, UpstreamRequest } from './provider.ts';
import { readBody, readErrorBody, type UpstreamClient, type UpstreamResponse } from './upstream.ts';
import { isAbort, transportError } from './upstream-errors.ts';

/** A provider that needs more follow-ups than this (a prediction polled for too long) has failed. */
export const MAX_FOLLOW_UPS = 600;

export interface ChatCallDeps {
  upstream: UpstreamClient;
  breakers: Breakers;
  io: ProviderIO;
}

const unsupported = (provider: string, what: string, details: Record<string, unknown>) =>
  new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${provider} does not support ${what}`, { provider, ...details });

/** The provider's chat translator, once the request asks for nothing it lacks. */
export function chatTranslatorFor(provider: ProviderDefinition, request: ChatCompletionRequest, stream: boolean): ChatTranslator {
  const can = provider.capabilities.chat;
  if (!can || !provider.chat) throw unsupported(provider.slug, 'chat', { capability: 'chat' });
  if (stream && !can.stream) throw unsupported(provider.slug, 'streaming chat', { capability: 'stream' });
  if ((request.n ?? 1) > 1 && !can.n) throw unsupported(provider.slug, 'n > 1 (several choices per request)', { capability: 'n' });
  const tools = request.tools ?? [];
  if (tools.some((t) => t.type === 'function') && !can.tools) throw unsupported(provider.slug, 'tools', { capability: 'tools' });
  const builtIn = tools.flatMap((t) => (t.type === 'built_in' ? [t.built_in] : []));
  const missing = builtIn.filter((name) => !(can.builtInTools ?? []).includes(name));
  if (missing.length > 0) throw unsupported(provider.slug, `the built-in tool${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`, { tools: missing });
  const hasImage = request.messages.some((m) => Array.isArray(m.content) && m.content.some((p) => p.type === 'image_url'));
  if (hasImage && !can.vision) throw unsupported(provider.slug, 'image inputs', { capability: 'vision' });
  return provider.chat;
}

// The abort listener goes when the wait ends: a prediction polled hundreds of times must not pile them up.
const sleep = (ms: number, signal: AbortSignal) => new Promise<void>((resolve, reject) => {
  const onAbort = () => {
    clearTimeout(timer);
    reject(signal.reason);
  };
  const timer = setTimeout(() => {
    signal.removeEventListener('abort', onAbort);
    resolve();
  }, ms);
  signal.addEventListener('abort', onAbort, { once: true });
});

/** A whole JSON answer, at most upstream.maxBodyBytes of it. */
async function readJson(response: UpstreamResponse, slug: string, maxBytes: number): Promise<unknown> {
  let bytes: Buffer;
  try {
    bytes = await readBody(response, maxBytes);
  } catch (err) {
    throw isAbort(err) ? err : transportError(slug, err, 'request');
  }
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new GatewayError('UPSTREAM_ERROR', `${slug} returned a body that is not JSON`, { provider: slug });
  }
}

/** Sends, authorizes and follows up, inside the breaker; returns the final response (body unread) or JSON. */
async function exchange(
  deps: ChatCallDeps, provider: ProviderDefinition, chat: ChatTranslator, target: ProviderTarget,
  first: UpstreamRequest, stream: boolean, signal: AbortSignal,
): Promise<{ stream: UpstreamResponse } | { body: unknown }> {
  const send = async (request: UpstreamRequest): Promise<UpstreamResponse> => {
    let response: UpstreamResponse;
    try {
      const authorized = provider.authorize ? await provider.authorize(request, target, deps.io, signal) : request;
      response = await deps.upstream.send(target.baseUrl, authorized, signal);
    } catch (err) {
      throw isAbort(err) ? err : transportError(target.slug, err, 'request');
    }
    if (response.statusCode >= 400) throw provider.mapError(response.statusCode, await readErrorBody(response), target, response.headers);
    return response;
  };
  return deps.breakers.run(target.slug, target.baseUrl, async () => {
    let response = await send(first);
    const maxBytes = deps.upstream.maxBodyBytes;
    if (!chat.followUp) return stream ? { stream: response } : { body: await readJson(response, target.slug, maxBytes) };
    for (let step = 0; step < MAX_FOLLOW_UPS; step++) {
      const body = await readJson(response, target.slug, maxBytes);
      const next = chat.followUp!(body, target, stream, step);
      if (!next) {
        if (stream) throw new GatewayError('UPSTREAM_ERROR', `${target.slug} gave no stream to follow`, { provider: target.slug });
        return { body };
      }
      if (next.delayMs) await sleep(next.delayMs, signal);
      response = await send(next.request);
      if (next.stream) return { stream: response };
    }
    throw new GatewayError('UPSTREAM_TIMEOUT', `${target.slug} did not finish within ${MAX_FOLLOW_UPS} follow-up requests`, { provider: target.slug });
  });
}

/**
 * Pulls a stream's first chunk before the caller is answered. A stream that fails before it (an error event, a
 * frame too large, a close with nothing sent) fails the call as any upstream failure does: retried or passed to
 * the next target, or answered with its status, instead of a 200 that holds only an error event.
 */
async function started(stream: AsyncGenerator<ChatCompletionChunk>): Promise<AsyncIterable<ChatCompletionChunk>> {
  const first = await stream.next();
  return (async function* () {
    if (first.done) return;
    yield first.value;
    yield* stream;
  })();
}

export async function callChat(ctx: GatewayContext, deps: ChatCallDeps, provider: ProviderDefinition, target: ProviderTarget): Promise<void> {
  const gw = ctx.state.gw;
  const request = chatRequestOf(gw.canonical!);
  const chat = chatTranslatorFor(provider, request.body, request.stream);
  const upstreamRequest = chat.toUpstream(request.body, target, request.stream);
  const answer = await exchange(deps, provider, chat, target, upstreamRequest, request.stream, gw.signal);
  const routed = () => {
    gw.target = { provider: target.slug, baseUrl: target.baseUrl, requestedModel: request.model, upstreamModel: target.upstreamModel };
    ctx.set('X-Provider', target.slug);
    ctx.set('X-Model', target.upstreamModel);
  };

  if ('stream' in answer) {
    gw.stream = await started(canonicalChatStream({
      response: answer.stream, chat, target, request: request.body, signal: gw.signal, maxFrameBytes: deps.upstream.maxFrameBytes,
      onEstimated: () => {
        gw.usageEstimated = true;
      },
    }));
    routed();
    return;
  }
  routed();
  const result = chat.fromUpstream(answer.body, target, request.body);
  if (!result.usage) {
    const text = result.choices.map((c) => c.message.content ?? '').join('');
    result.usage = await estimateUsage(request.body, text);
    gw.usageEstimated = true;
  }
  gw.result = result;
}
