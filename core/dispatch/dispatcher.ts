/**
 * The last step of a chat pipeline: the canonical request goes to a provider target (falling back to the
 * next one on retryable failures before any byte was sent), and the answer or stream comes back canonical.
 */
import type { ChatCompletionChunk } from '../canonical/chat.ts';
import { GatewayError } from '../errors.ts';
import type { GatewayContext, GatewayMiddleware } from '../pipeline/context.ts';
import { decodeSse } from '../streaming/sse.ts';
import type { Breakers } from './breakers.ts';
import type { ChatTranslator, ProviderDefinition, ProviderTarget } from './provider.ts';
import type { ProviderRegistry } from './provider-registry.ts';
import type { RoutingTable } from './routing.ts';
import { readErrorBody, type UpstreamClient, type UpstreamResponse } from './upstream.ts';
import { isAbort, isRetryable, transportError } from './upstream-errors.ts';

export interface DispatcherDeps {
  routing: RoutingTable;
  providers: ProviderRegistry;
  upstream: UpstreamClient;
  breakers: Breakers;
}

export function createDispatcher(deps: DispatcherDeps): GatewayMiddleware {
  return async (ctx) => {
    const gw = ctx.state.gw;
    if (gw.result || gw.stream) return; // answered early by a plugin
    const request = await gw.request();
    const { targets } = deps.routing.resolve(request.model, gw.caller?.policy);
    let lastError: unknown;
    for (const target of targets) {
      try {
        await dispatchTo(ctx, deps, target);
        return;
      } catch (err) {
        if (gw.signal.aborted) throw err;
        lastError = err;
        if (!isRetryable(err)) throw err;
      }
    }
    throw lastError;
  };
}

async function dispatchTo(ctx: GatewayContext, deps: DispatcherDeps, target: ProviderTarget): Promise<void> {
  const gw = ctx.state.gw;
  const request = gw.canonical!;
  const provider = deps.providers.get(target.slug)!;
  const chat = chatTranslator(provider, request.stream);
  const upstreamRequest = chat.toUpstream(request.body, target, request.stream);

  const response = await deps.breakers.run(target.slug, target.baseUrl, async () => {
    let res: UpstreamResponse;
    try {
      res = await deps.upstream.send(target.baseUrl, upstreamRequest, gw.signal);
    } catch (err) {
      throw isAbort(err) ? err : transportError(target.slug, err, 'request');
    }
    if (res.statusCode >= 400) throw provider.mapError(res.statusCode, await readErrorBody(res), target);
    return res;
  });

  gw.target = { provider: target.slug, baseUrl: target.baseUrl, requestedModel: request.model, upstreamModel: target.upstreamModel };
  ctx.set('X-Provider', target.slug);
  ctx.set('X-Model', target.upstreamModel);

  if (request.stream) {
    gw.stream = decodeChatStream(response, chat, target, gw.signal);
    return;
  }
  let body: unknown;
  try {
    body = await response.body.json();
  } catch (err) {
    if (isAbort(err)) throw err;
    throw new GatewayError('UPSTREAM_ERROR', `${target.slug} returned a body that is not JSON`, { provider: target.slug });
  }
  gw.result = chat.fromUpstream(body, target);
}

function chatTranslator(provider: ProviderDefinition, stream: boolean): ChatTranslator {
  const capability = provider.capabilities.chat;
  if (!capability || !provider.chat) {
    throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${provider.slug} does not support chat`, { provider: provider.slug, capability: 'chat' });
  }
  if (stream && !capability.stream) {
    throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${provider.slug} does not support streaming chat`, { provider: provider.slug, capability: 'stream' });
  }
  return provider.chat;
}

async function* decodeChatStream(
  response: UpstreamResponse,
  chat: ChatTranslator,
  target: ProviderTarget,
  signal: AbortSignal,
): AsyncGenerator<ChatCompletionChunk> {
  const decoder = chat.streamDecoder(target);
  let finished = false;
  try {
    for await (const event of decodeSse(response.body)) {
      const { chunks, done } = decoder.event(event);
      for (const chunk of chunks) yield chunk;
      if (done) {
        finished = true;
        return;
      }
    }
    for (const chunk of decoder.end()) yield chunk;
    finished = true;
  } catch (err) {
    if (signal.aborted || isAbort(err)) throw err;
    throw transportError(target.slug, err, 'stream');
  } finally {
    // After [DONE] the rest is drained so the connection returns to the pool; otherwise it is dropped.
    if (finished) await response.body.dump().catch(() => {});
    else response.body.destroy();
  }
}
