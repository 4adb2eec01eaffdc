/**
 * One text-to-speech call to one provider target. The translator builds the request; on a 2xx the answer's body
 * is the audio, passed on as it arrives and never held whole. Its first chunk is awaited here, so an answer that
 * breaks or is empty before any audio fails the call as any upstream failure does (retried, or the next target);
 * a body that breaks later is counted against the upstream's breaker, and the caller's connection is cut.
 */
import { SPEECH_CONTENT_TYPES, speechCharacters, type CanonicalSpeechRequest, type SpeechRequest } from '../canonical/audio.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import type { Breakers } from './breakers.ts';
import { badAnswer, exchange, markRouted, unsupported, type CallDeps } from './exchange.ts';
import type { ProviderDefinition, ProviderTarget, SpeechTranslator } from './provider.ts';
import type { UpstreamResponse } from './upstream.ts';
import { isAbort, transportError } from './upstream-errors.ts';
import { callSignal } from '../pipeline/abort.ts';

export function speechTranslatorFor(provider: ProviderDefinition): SpeechTranslator {
  if (!provider.capabilities.speech || !provider.speech) throw unsupported(provider.slug, 'text to speech', { capability: 'speech' });
  return provider.speech;
}

export function checkSpeech(provider: ProviderDefinition): void {
  speechTranslatorFor(provider);
}

/** Generic types say nothing about the audio: the translator's or the asked format's type is sent instead. */
const GENERIC_TYPES = new Set(['application/octet-stream', 'binary/octet-stream']);

/** The answer's Content-Type when it names an audio type, else the translator's, else the asked format's. */
export function speechContentType(header: unknown, translator: SpeechTranslator, request: SpeechRequest, target: ProviderTarget): string {
  const given = typeof header === 'string' ? header.trim() : '';
  const essence = given.split(';')[0]!.trim().toLowerCase();
  if (essence !== '' && !GENERIC_TYPES.has(essence) && !essence.startsWith('application/json') && !essence.startsWith('text/')) return given;
  return translator.contentType?.(request, target) ?? SPEECH_CONTENT_TYPES[request.response_format];
}

/**
 * The body's chunks, the first already read. A break after it (not the caller leaving) is the upstream's failure:
 * the breaker counts it, and the error ends the caller's answer.
 */
async function* audioAfter(first: Uint8Array, rest: AsyncIterator<unknown>, response: UpstreamResponse, target: ProviderTarget, breakers: Breakers, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  try {
    yield first;
    for (;;) {
      const next = await rest.next();
      if (next.done) return;
      yield next.value as Uint8Array;
    }
  } catch (err) {
    if (signal.aborted || isAbort(err)) throw err;
    const failure = transportError(target.slug, err, 'stream');
    breakers.countFailure(target.slug, target.baseUrl, failure);
    throw failure;
  } finally {
    // The caller left or the answer failed: the upstream body goes, and its connection slot with it.
    if (!response.body.readableEnded) response.body.destroy();
  }
}

export async function callSpeech(ctx: GatewayContext, deps: CallDeps, provider: ProviderDefinition, target: ProviderTarget): Promise<void> {
  const gw = ctx.state.gw;
  const request = gw.canonical as CanonicalSpeechRequest;
  const translator = speechTranslatorFor(provider);
  const followUp = translator.followUp && ((answer: unknown, t: ProviderTarget, _stream: boolean, step: number) => translator.followUp!(answer, t, step, request.body));
  const answer = await exchange(deps, provider, target, translator.toUpstream(request.body, target), { stream: true, ...(followUp ? { followUp } : {}) }, callSignal(gw));
  if (!('stream' in answer)) throw new Error('a speech exchange returned no stream');
  const response = answer.stream;
  const chunks = response.body[Symbol.asyncIterator]();
  let first: IteratorResult<unknown>;
  try {
    first = await chunks.next();
  } catch (err) {
    response.body.destroy();
    throw gw.signal.aborted || isAbort(err) ? err : transportError(target.slug, err, 'stream');
  }
  if (first.done) throw badAnswer(target, 'speech without audio');
  markRouted(ctx, target, request.model);
  gw.result = {
    object: 'speech',
    contentType: speechContentType(response.headers['content-type'], translator, request.body, target),
    audio: audioAfter(first.value as Uint8Array, chunks, response, target, deps.breakers, gw.signal),
    usage: { characters: speechCharacters(request.body.input) },
  };
}
