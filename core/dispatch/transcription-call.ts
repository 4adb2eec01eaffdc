/**
 * One transcription or translation call to one provider target. The audio (read whole by the ingress, at most
 * 10 MB) goes as the translator's plan says: a multipart form framed here, the raw bytes, or inside the JSON the
 * translator built. Asynchronous providers (upload, then a job to poll) follow up through the exchange. The
 * answer is checked: text, and duration and segments that make sense; the audio seconds it is metered by come from
 * the provider's duration, else the last segment's end, else the file's own duration (its container says it).
 */
import { Readable } from 'node:stream';
import type { CanonicalTranscriptionRequest, TranscriptionResult, TranscriptSegment } from '../canonical/audio.ts';
import { audioDuration } from '../canonical/audio-duration.ts';
import { audioSeconds } from '../canonical/units.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import { badAnswer, exchange, markRouted, unsupported, type CallDeps } from './exchange.ts';
import { framed, newBoundary, pulled } from './multipart.ts';
import type { ProviderDefinition, ProviderTarget, TranscriptionTask, TranscriptionTranslator, UpstreamRequest } from './provider.ts';
import { callSignal } from '../pipeline/abort.ts';

export function transcriptionTranslatorFor(provider: ProviderDefinition, task: TranscriptionTask): TranscriptionTranslator {
  if (!provider.capabilities[task] || !provider.transcription) {
    throw unsupported(provider.slug, task === 'translation' ? 'audio translation' : 'audio transcription', { capability: task });
  }
  return provider.transcription;
}

export function checkTranscription(provider: ProviderDefinition, request: CanonicalTranscriptionRequest): void {
  transcriptionTranslatorFor(provider, request.modality);
}

/** The first request and its body, as the plan says. */
function planned(translator: TranscriptionTranslator, request: CanonicalTranscriptionRequest, target: ProviderTarget): { first: UpstreamRequest; body?: () => Readable } {
  const { audio } = request.body;
  const plan = translator.toUpstream(request.body, target, request.modality);
  switch (plan.kind) {
    case 'json': return { first: plan.request };
    case 'raw': return { first: { ...plan.request, bodyStreamed: true }, body: () => Readable.from([audio.bytes]) };
    case 'multipart': {
      const boundary = newBoundary();
      const first = { ...plan.request, headers: { ...plan.request.headers, 'content-type': `multipart/form-data; boundary=${boundary}` }, bodyStreamed: true };
      const file = { field: plan.fileField, filename: audio.filename, mimeType: audio.mimeType };
      return { first, body: () => pulled(framed(boundary, plan.fields, file, (async function* () { yield audio.bytes; })())) };
    }
  }
}

const finite = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0;

/** The translator's answer, checked: never a made-up duration or a segment that runs backwards. */
export function finishTranscription(target: ProviderTarget, result: TranscriptionResult): TranscriptionResult {
  if (!result || typeof result.text !== 'string') throw badAnswer(target, 'a transcription without text');
  const segments: TranscriptSegment[] | undefined = result.segments?.map((segment, i) => {
    if (!finite(segment.start) || !finite(segment.end) || segment.end < segment.start || typeof segment.text !== 'string') {
      throw badAnswer(target, `a transcript segment (${i}) without a start, an end after it and text`);
    }
    return { id: Number.isInteger(segment.id) ? segment.id : i, start: segment.start, end: segment.end, text: segment.text };
  });
  const duration = finite(result.duration) ? result.duration : undefined;
  const heard = audioSeconds(result.usage?.audio_seconds) || audioSeconds(duration) || audioSeconds(segments?.at(-1)?.end);
  return {
    object: 'transcription', text: result.text,
    ...(result.language ? { language: result.language } : {}),
    ...(duration !== undefined ? { duration } : {}),
    ...(segments ? { segments } : {}),
    usage: { ...result.usage, audio_seconds: heard },
  };
}

export async function callTranscription(ctx: GatewayContext, deps: CallDeps, provider: ProviderDefinition, target: ProviderTarget): Promise<void> {
  const gw = ctx.state.gw;
  const request = gw.canonical as CanonicalTranscriptionRequest;
  const translator = transcriptionTranslatorFor(provider, request.modality);
  const { first, body } = planned(translator, request, target);
  const followUp = translator.followUp && ((answer: unknown, t: ProviderTarget, _stream: boolean, step: number) => translator.followUp!(answer, t, step, request.body));
  const answer = await exchange(deps, provider, target, first, { stream: false, ...(followUp ? { followUp } : {}), ...(body ? { body } : {}) }, callSignal(gw));
  if ('stream' in answer) throw new Error('a transcription exchange returned a stream');
  const result = finishTranscription(target, translator.fromUpstream(answer.body, target, request.body, request.modality));
  if (!result.usage.audio_seconds) {
    // The provider reported no duration (a model billed by tokens): the file's own is what the request heard.
    const duration = await audioDuration(request.body.audio.bytes, request.body.audio.mimeType);
    if (duration !== null) result.usage.audio_seconds = audioSeconds(duration);
  }
  markRouted(ctx, target, request.model);
  gw.result = result;
}
