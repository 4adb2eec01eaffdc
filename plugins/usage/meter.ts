/**
 * One request's usage record, made exactly once however the request ends: a complete answer, a stream that
 * completed, was cut by the client or failed upstream, or an error before any answer. A stream cut before its
 * usage chunk is charged an estimate (core/canonical/estimate.ts): the prompt as sent, and the completion text
 * the caller received; the record says it is estimated. Every record names its modality and carries its units:
 * tokens, search units for rerank, audio seconds for transcription, characters for speech, images
 * for image generation (core/canonical/units.ts); a video job's seconds are metered work recorded when it completes.
 */
import { orderedUuid } from '../../core/store/ids.ts';
import type { CanonicalResult, ChatCompletionChunk, Usage } from '../../core/canonical/chat.ts';
import { estimateUsage } from '../../core/canonical/estimate.ts';
import type { ModelConfig } from '../../core/config/types.ts';
import { GatewayError } from '../../core/errors.ts';
import { overriddenModel, UNRESTRICTED } from '../../core/identity/policy.ts';
import type { PluginLogger as Logger } from '../../core/pipeline/services.ts';
import type { GatewayState, StreamOutcome } from '../../core/pipeline/context.ts';
import { costUsd } from '../../core/canonical/pricing.ts';
import { safeText, type UsageRecord, type UsageStatus } from './record.ts';
import { meteredAsAnswered, meteredModality, meteredResult, tokenCount } from '../../core/canonical/units.ts';

/** Completion text kept for an estimate; past it, characters are counted at about four per token. */
const MAX_TEXT_CHARS = 1 << 20;

export interface MeterDeps {
  models: ReadonlyMap<string, ModelConfig>;
  logger: Logger;
  record(record: UsageRecord): void;
}

interface Ending {
  status: UsageStatus;
  usage: Usage | null;
  /** Rerank: the search units billed. */
  searchUnits?: number;
  /** Transcription and translation: the seconds of audio heard. */
  audioSeconds?: number;
  /** Speech: the characters of the input spoken. */
  characters?: number;
  /** Image generation: the images made, at the size and quality asked. */
  images?: number;
  imageSize?: string;
  imageQuality?: string;
  estimated: boolean;
  error?: unknown;
  /** An answer reached the caller (or began to): ttfb is known. */
  answered: boolean;
  /** Fallback only: an error code read from the response. */
  errorCode?: string | null;
}

const noop = (): void => {};
const round = (ms: number) => Math.round(ms * 100) / 100;

export class RequestMeter {
  private done = false;
  private firstChunkAt: number | null = null;
  private readonly text: string[] = [];
  private textChars = 0;
  private overflowChars = 0;

  /**
   * @param onRecorded called once the record is handed to the recorder (OpenMeters counts the request out).
   */
  constructor(
    private readonly gw: GatewayState, private readonly deps: MeterDeps, private readonly arrivedAt: number, private readonly onRecorded: () => void = noop,
  ) {}

  get recorded(): boolean {
    return this.done;
  }

  /** Stream tap: time of the first chunk, and the text the caller receives (for an estimate if the stream is cut). */
  chunk(chunk: ChatCompletionChunk): void {
    this.firstChunkAt ??= performance.now();
    for (const choice of chunk.choices) {
      if (choice.delta.content) this.keep(choice.delta.content);
      for (const call of choice.delta.tool_calls ?? []) if (call.function?.arguments) this.keep(call.function.arguments);
    }
  }

  private keep(text: string): void {
    if (this.textChars + text.length <= MAX_TEXT_CHARS) {
      this.text.push(text);
      this.textChars += text.length;
    } else {
      this.overflowChars += text.length;
    }
  }

  /** A complete answer (gw.result), of any modality. */
  answered(result: CanonicalResult): void {
    if (this.done) return;
    // Claimed now, written once measured (an embeddings answer without usage is estimated first).
    this.done = true;
    const ending: Ending = { status: 'completed', usage: null, estimated: false, answered: true };
    // What the answer says it used is written at once; only an embeddings answer without usage is counted first.
    const reported = meteredAsAnswered(this.gw.canonical, result, this.gw.usageEstimated === true);
    if (reported) {
      this.write(Object.assign(ending, reported));
      return;
    }
    meteredResult(this.gw.canonical, result, this.gw.usageEstimated === true)
      .then((metered) => Object.assign(ending, metered))
      .catch((err) => this.deps.logger.warn({ err, requestId: this.gw.requestId }, 'usage: could not measure an answer'))
      .finally(() => this.write(ending));
  }

  /** An error before (or instead of) an answer. */
  failed(error: unknown): void {
    const aborted = this.gw.signal.aborted;
    this.finish({ status: aborted ? 'aborted' : 'failed', usage: null, estimated: false, ...(aborted ? {} : { error }), answered: false });
  }

  /** The stream stage's ending (ResponseStage.complete): the meter is registered as a stage itself. */
  complete(outcome: StreamOutcome): void {
    this.streamEnded(outcome);
  }

  /** Stream tap: how the stream ended. A cut stream is charged what the caller received. */
  streamEnded(outcome: StreamOutcome): void {
    if (this.done) return;
    if (outcome.status === 'completed') {
      this.finish({ status: 'completed', usage: outcome.usage, estimated: this.gw.usageEstimated === true, answered: true });
      return;
    }
    const ending: Ending = { status: outcome.status, usage: outcome.usage, estimated: false, answered: outcome.chunks > 0, error: outcome.error };
    // Only chat streams: the other modalities answer whole.
    const request = this.gw.canonical?.modality === 'chat' ? this.gw.canonical.body : undefined;
    if (!request) {
      this.finish(ending);
      return;
    }
    // Claimed now, written once the estimate is ready: a second ending can no longer slip in.
    this.done = true;
    estimateUsage(request, this.text.join(''))
      .then((estimate) => {
        const counted = estimate.completion_tokens + Math.ceil(this.overflowChars / 4);
        const reported = outcome.usage;
        if (!reported) {
          ending.usage = { prompt_tokens: estimate.prompt_tokens, completion_tokens: counted, total_tokens: estimate.prompt_tokens + counted };
          ending.estimated = true;
        } else if (counted > reported.completion_tokens) {
          // Early usage (prompt only, as some providers send first): the completion so far is counted.
          ending.usage = { ...reported, completion_tokens: counted, total_tokens: reported.prompt_tokens + counted };
          ending.estimated = true;
        }
      })
      .catch((err) => this.deps.logger.warn({ err, requestId: this.gw.requestId }, 'usage: could not estimate the tokens of a cut stream'))
      .finally(() => this.write(ending));
  }

  /** The response closed and no ending came (a stream that was never sent): recorded from what is known. */
  fallback(responseFinished: boolean, errorCode: string | null): void {
    if (this.done) return;
    this.finish(responseFinished
      ? { status: 'failed', usage: null, estimated: false, answered: false, errorCode: errorCode ?? 'INTERNAL_ERROR' }
      : { status: 'aborted', usage: null, estimated: false, answered: false });
  }

  private finish(ending: Ending): void {
    if (this.done) return;
    this.done = true;
    this.write(ending);
  }

  private write(ending: Ending): void {
    const now = performance.now();
    const gw = this.gw;
    const caller = gw.caller;
    const requested = gw.canonical?.model ?? null;
    const resolved = requested === null ? null : overriddenModel(caller?.policy ?? UNRESTRICTED, requested);
    const model = resolved !== null ? this.deps.models.get(resolved) : undefined;
    const errorProvider = (ending.error instanceof GatewayError ? (ending.error.details as { provider?: unknown } | null)?.provider : undefined);
    const provider = gw.target?.provider ?? (typeof errorProvider === 'string' ? errorProvider : null);

    const usage = ending.usage;
    const prompt = tokenCount(usage?.prompt_tokens);
    const completion = tokenCount(usage?.completion_tokens);
    const cached = tokenCount(usage?.prompt_tokens_details?.cached_tokens);
    const reasoning = tokenCount(usage?.completion_tokens_details?.reasoning_tokens);
    const total = usage && typeof usage.total_tokens === 'number' ? tokenCount(usage.total_tokens) : prompt + completion;
    const searchUnits = tokenCount(ending.searchUnits);
    const audioSeconds = ending.audioSeconds ?? 0;
    const characters = tokenCount(ending.characters);
    const images = tokenCount(ending.images);
    // Answered without a provider (a plugin's cache hit, say): units are recorded, nothing was spent.
    const spent = gw.target && !gw.servedFromCache
      ? { prompt_tokens: prompt, completion_tokens: completion, prompt_tokens_details: { cached_tokens: cached }, search_units: searchUnits, audio_seconds: audioSeconds, characters,
        images, image_size: ending.imageSize, image_quality: ending.imageQuality }
      : { prompt_tokens: 0, completion_tokens: 0 };

    let errorCode: string | null = null;
    if (ending.status === 'failed') errorCode = ending.errorCode ?? (ending.error instanceof GatewayError ? ending.error.code : 'INTERNAL_ERROR');

    const latencyMs = round(now - gw.startedAt);
    let ttfbMs: number | null = null;
    if (this.firstChunkAt !== null) ttfbMs = round(this.firstChunkAt - gw.startedAt);
    else if (ending.answered && !gw.stream) ttfbMs = latencyMs;

    this.deps.record({
      id: orderedUuid(),
      requestId: gw.requestId,
      createdAt: this.arrivedAt,
      tenantId: safeText(caller?.tenantId) ?? 'default',
      organizationId: safeText(caller?.organizationId),
      departmentId: safeText(caller?.departmentId),
      callerKind: caller?.kind ?? null,
      apiKeyId: caller?.kind === 'api_key' ? caller.id : null,
      userId: caller?.kind === 'jwt' ? safeText(caller.id) : null,
      endpoint: gw.endpoint.path,
      modality: meteredModality(gw.canonical, gw.endpoint.path),
      stream: gw.canonical?.stream ?? gw.stream !== undefined,
      provider,
      requestedModel: safeText(requested),
      model: model ? model.id : null,
      upstreamModel: gw.target?.upstreamModel ?? null,
      promptTokens: prompt,
      completionTokens: completion,
      cachedTokens: cached,
      reasoningTokens: reasoning,
      totalTokens: total,
      searchUnits,
      audioSeconds,
      characters,
      images,
      estimated: ending.estimated,
      costUsd: costUsd(model?.pricing, spent),
      latencyMs,
      ttfbMs,
      status: ending.status,
      errorCode,
      cacheStatus: gw.servedFromCache ? (gw.servedFromCache.kind === 'exact' ? 'hit' : 'semantic-hit') : null,
      retrieval: gw.retrieval ? JSON.stringify(gw.retrieval) : null,
      guardVerdicts: gw.guardVerdicts && gw.guardVerdicts.length > 0 ? JSON.stringify(gw.guardVerdicts) : null,
    });
    this.onRecorded();
  }
}
