/**
 * The exchange every modality shares: a built request is authorized, sent through the upstream's breaker (with
 * the follow-ups a multi-step provider needs), an error answer is mapped by the provider, and a whole answer
 * is read within upstream.maxBodyBytes. The modality call modules (chat-call.ts, embeddings-call.ts,
 * rerank-call.ts) build the request and translate the answer; nothing here knows a modality.
 */
import { GatewayError } from '../errors.ts';
import type { Readable } from 'node:stream';
import type { GatewayContext } from '../pipeline/context.ts';
import type { Breakers } from './breakers.ts';
import type { FollowUp, ProviderDefinition, ProviderIO, ProviderTarget, UpstreamRequest } from './provider.ts';
import { parseErrorBody, readErrorBody, type UpstreamClient, type UpstreamResponse, type WholeResponse } from './upstream.ts';
import { abortSignalOf, type CallSignal } from '../pipeline/abort.ts';
import { isAbort, transportError } from './upstream-errors.ts';

/** A provider that needs more follow-ups than this (a prediction polled for too long) has failed. */
export const MAX_FOLLOW_UPS = 600;

/** What a call to one target needs: the upstream client, the breakers, and the I/O `authorize` may do. */
export interface CallDeps {
  upstream: UpstreamClient;
  breakers: Breakers;
  io: ProviderIO;
}

/** Given a 2xx JSON answer, the next request of a multi-step call, or null when this answer is final. */
export type FollowUpHook = (body: unknown, target: ProviderTarget, stream: boolean, step: number) => FollowUp | null;

export const unsupported = (provider: string, what: string, details: Record<string, unknown>) =>
  new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${provider} does not support ${what}`, { provider, ...details });

/**
 * Rejects with the signal's reason on abort. The abort listener goes when the wait ends: a prediction polled
 * hundreds of times must not pile them up.
 */
export const sleep = (ms: number, signal: AbortSignal) => new Promise<void>((resolve, reject) => {
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

/**
 * A whole JSON answer. A 202 Accepted with no body at all (xAI's answer to a poll of a video still pending) reads
 * as null: the translator says what that means.
 */
function parseJson(response: WholeResponse, slug: string): unknown {
  if (response.statusCode === 202 && response.body.length === 0) return null;
  try {
    return JSON.parse(response.body.toString('utf8'));
  } catch {
    throw new GatewayError('UPSTREAM_ERROR', `${slug} returned a body that is not JSON`, { provider: slug });
  }
}

export interface ExchangeOptions {
  /** The caller asked for a stream: the final response is returned with its body unread. */
  stream: boolean;
  followUp?: FollowUpHook;
  /** The first request's body as a stream (audio, a multipart form), made anew for each attempt. */
  body?: () => Readable;
}

/**
 * Sends, authorizes and follows up, inside the breaker; returns the final response (body unread) or JSON. A
 * JSON answer is read whole as it arrives, at most upstream.maxBodyBytes of it.
 */
export async function exchange(
  deps: CallDeps, provider: ProviderDefinition, target: ProviderTarget, first: UpstreamRequest, options: ExchangeOptions, signal: CallSignal,
): Promise<{ stream: UpstreamResponse } | { body: unknown }> {
  const { stream, followUp } = options;
  // Most providers sign nothing per request (their key is a static header): no promise for them.
  const authorize = (request: UpstreamRequest): UpstreamRequest | Promise<UpstreamRequest> =>
    (provider.authorize ? provider.authorize(request, target, deps.io, abortSignalOf(signal)) : request);
  const failed = (err: unknown, body: Readable | undefined): never => {
    body?.destroy();
    throw isAbort(err) ? err : transportError(target.slug, err, 'request');
  };
  const send = async (request: UpstreamRequest, body?: Readable): Promise<UpstreamResponse> => {
    let response: UpstreamResponse;
    try {
      const authorized = authorize(request);
      response = await deps.upstream.send(target.baseUrl, authorized instanceof Promise ? await authorized : authorized, signal, body);
    } catch (err) {
      return failed(err, body);
    }
    if (response.statusCode >= 400) {
      body?.destroy();
      throw provider.mapError(response.statusCode, await readErrorBody(response), target, response.headers);
    }
    return response;
  };
  const sendForJson = async (request: UpstreamRequest, body?: Readable): Promise<unknown> => {
    let response: WholeResponse;
    try {
      const authorized = authorize(request);
      response = await deps.upstream.sendWhole(target.baseUrl, authorized instanceof Promise ? await authorized : authorized, signal, deps.upstream.maxBodyBytes, body);
    } catch (err) {
      return failed(err, body);
    }
    if (response.statusCode >= 400) {
      body?.destroy();
      throw provider.mapError(response.statusCode, parseErrorBody(response.body), target, response.headers);
    }
    return parseJson(response, target.slug);
  };
  return deps.breakers.run(target.slug, target.baseUrl, async () => {
    if (stream && !followUp) return { stream: await send(first, options.body?.()) };
    let body = await sendForJson(first, options.body?.());
    if (!followUp) return { body };
    for (let step = 0; step < MAX_FOLLOW_UPS; step++) {
      const next = followUp(body, target, stream, step);
      if (!next) {
        if (stream) throw new GatewayError('UPSTREAM_ERROR', `${target.slug} gave no stream to follow`, { provider: target.slug });
        return { body };
      }
      if (next.delayMs) await sleep(next.delayMs, abortSignalOf(signal));
      if (next.stream) return { stream: await send(next.request) };
      body = await sendForJson(next.request);
    }
    throw new GatewayError('UPSTREAM_TIMEOUT', `${target.slug} did not finish within ${MAX_FOLLOW_UPS} follow-up requests`, { provider: target.slug });
  });
}

/** A non-streamed exchange: the answer's JSON. */
export async function exchangeJson(deps: CallDeps, provider: ProviderDefinition, target: ProviderTarget, request: UpstreamRequest, signal: CallSignal): Promise<unknown> {
  const answer = await exchange(deps, provider, target, request, { stream: false }, signal);
  if ('stream' in answer) throw new Error('a non-streamed exchange returned a stream');
  return answer.body;
}

/** Records where the call went: gw.target and the X-Provider / X-Model headers, the same for every modality. */
export function markRouted(ctx: GatewayContext, target: ProviderTarget, requestedModel: string): void {
  ctx.state.gw.target = { provider: target.slug, baseUrl: target.baseUrl, requestedModel, upstreamModel: target.upstreamModel };
  ctx.set('X-Provider', target.slug);
  ctx.set('X-Model', target.upstreamModel);
}

/** An answer the provider sent that the gateway cannot pass on as it is. */
export function badAnswer(target: ProviderTarget, what: string): GatewayError {
  return new GatewayError('UPSTREAM_ERROR', `${target.slug} returned ${what}`, { provider: target.slug });
}
