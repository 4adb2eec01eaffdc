/**
 * One request's audit record, made exactly once however the request ends: an answer, a stream that completed,
 * was cut or failed, an error (a refusal by a plugin listed after audit included), or a client that left. The
 * record is finished when the response closes (its HTTP status is known then); a stream waits for its ending.
 * Never a credential: no header is recorded, the caller appears by ids only, and bodies are opt-in and redacted.
 */
import { orderedUuid } from '../../core/store/ids.ts';
import type { ChatCompletionChunk, Usage } from '../../core/canonical/chat.ts';
import { costUsd } from '../../core/canonical/pricing.ts';
import { meteredResult, pricedUsage, tokenCount, type Metered } from '../../core/canonical/units.ts';
import type { ModelConfig } from '../../core/config/types.ts';
import { GatewayError } from '../../core/errors.ts';
import { overriddenModel, UNRESTRICTED } from '../../core/identity/policy.ts';
import type { GatewayState, StreamOutcome } from '../../core/pipeline/context.ts';
import { auditBody, wantsRequest, wantsResponse, type BodiesSetting } from './bodies.ts';
import { canonicalJson, type Json, type PendingRecord } from './chain.ts';

export interface RequestAuditOptions {
  bodies: BodiesSetting;
  maxBodyBytes: number;
  models: ReadonlyMap<string, ModelConfig>;
  now(): number;
}

type Outcome = 'completed' | 'aborted' | 'failed';

const round = (ms: number) => Math.round(ms * 100) / 100;
const text = (value: string | null | undefined, max = 256) => (value === undefined || value === null ? null : value.replace(/\u0000/g, '').slice(0, max));

export class RequestAudit {
  private error: unknown;
  private streamOutcome: StreamOutcome | undefined;
  private streamText: string[] = [];
  private streamChars = 0;
  private done = false;

  constructor(private readonly gw: GatewayState, private readonly options: RequestAuditOptions, private readonly arrivedAt: number) {}

  get finished(): boolean {
    return this.done;
  }

  get streamEnded(): boolean {
    return this.streamOutcome !== undefined;
  }

  /** What the caller was sent, kept (up to the body cap) only when responses are recorded. */
  chunk(chunk: ChatCompletionChunk): void {
    if (!wantsResponse(this.options.bodies) || this.streamChars > this.options.maxBodyBytes) return;
    for (const choice of chunk.choices) {
      const piece = choice.delta.content ?? '';
      if (piece) {
        this.streamText.push(piece);
        this.streamChars += piece.length;
      }
    }
  }

  failed(error: unknown): void {
    this.error = error;
  }

  ended(outcome: StreamOutcome): void {
    this.streamOutcome = outcome;
  }

  /**
   * The response closed: the record, from what is known. `status` is the HTTP status sent (or set, when the
   * client left before it was sent); `finished` whether the whole response was written.
   */
  async finish(status: number, finished: boolean, bodyErrorCode: string | null): Promise<PendingRecord | null> {
    if (this.done) return null;
    this.done = true;
    const gw = this.gw;
    const caller = gw.caller;
    const stream = this.streamOutcome;
    let outcome: Outcome;
    if (stream) outcome = stream.status;
    else if (!finished || (gw.signal.aborted && this.error !== undefined)) outcome = 'aborted';
    else outcome = status >= 400 || this.error !== undefined ? 'failed' : 'completed';

    let errorCode: string | null = null;
    const error = stream?.error ?? this.error;
    if (outcome === 'failed' || status >= 400) {
      errorCode = error instanceof GatewayError ? error.code : bodyErrorCode ?? (error !== undefined || status >= 500 ? 'INTERNAL_ERROR' : null);
    }

    const metered = await this.metered();
    const requested = gw.canonical?.model ?? null;
    const resolved = requested === null ? null : overriddenModel(caller?.policy ?? UNRESTRICTED, requested);
    const model = resolved === null ? undefined : this.options.models.get(resolved);
    const usage = metered?.usage ?? null;
    const tokens = usage ? tokensOf(usage) : null;
    const cost = metered && gw.target && !gw.servedFromCache ? spentUsd(model, metered) : 0;

    const content: Record<string, Json | undefined> = {
      v: 1,
      type: 'request',
      id: orderedUuid(),
      time: new Date(this.arrivedAt).toISOString(),
      requestId: gw.requestId,
      tenantId: text(caller?.tenantId),
      organizationId: text(caller?.organizationId),
      departmentId: text(caller?.departmentId),
      callerKind: caller?.kind ?? null,
      apiKeyId: caller?.kind === 'api_key' ? caller.id : null,
      userId: caller?.kind === 'jwt' ? text(caller.id) : null,
      clientIp: gw.clientIp,
      method: gw.endpoint.method,
      route: gw.endpoint.path,
      pipeline: gw.pipeline,
      modelRequested: text(requested),
      modelResolved: model ? model.id : text(resolved),
      provider: gw.target?.provider ?? null,
      upstreamModel: gw.target?.upstreamModel ?? null,
      stream: gw.canonical?.stream ?? gw.stream !== undefined,
      status,
      outcome,
      errorCode,
      tokens,
      tokensEstimated: metered ? metered.estimated || gw.usageEstimated === true : false,
      costUsd: cost === null ? null : Math.round(cost * 1e9) / 1e9,
      cache: gw.servedFromCache ? (gw.servedFromCache.kind === 'exact' ? 'hit' : 'semantic-hit') : null,
      retrievalChunks: gw.retrieval ? gw.retrieval.chunks.map((c) => ({ storeId: c.storeId, fileId: c.fileId, chunkIndex: c.chunkIndex })) : [],
      guardVerdicts: (gw.guardVerdicts ?? []).map((v) => ({ ...v })) as unknown as Json,
      latencyMs: round(performance.now() - gw.startedAt),
      ...this.bodies(),
    };
    return {
      id: content.id as string,
      kind: 'request',
      occurredAt: this.arrivedAt,
      requestId: gw.requestId,
      tenantId: content.tenantId as string | null,
      apiKeyId: content.apiKeyId as string | null,
      route: gw.endpoint.path,
      status,
      content: canonicalJson(content),
    };
  }

  private async metered(): Promise<Metered | null> {
    const stream = this.streamOutcome;
    if (stream) return stream.usage ? { usage: stream.usage, searchUnits: 0, audioSeconds: 0, characters: 0, images: 0, videoSeconds: 0, estimated: false } : null;
    if (!this.gw.result) return null;
    return meteredResult(this.gw.canonical, this.gw.result, this.gw.usageEstimated === true).catch(() => null);
  }

  private bodies(): Record<string, Json> {
    const out: Record<string, Json> = {};
    const { bodies, maxBodyBytes } = this.options;
    // What a guard blocked is what policy says must not be kept or passed on: the record names the verdict, not the text.
    const blocked = (direction: 'input' | 'output') => (this.gw.guardVerdicts ?? []).some((v) => v.action === 'block' && v.direction === direction);
    if (wantsRequest(bodies) && this.gw.canonical && blocked('input')) out.requestBodyOmitted = 'guard_blocked';
    else if (wantsRequest(bodies) && this.gw.canonical) {
      const body = auditBody(this.gw.canonical.body, maxBodyBytes);
      out.requestBody = body.text;
      if (body.truncated) out.requestBodyTruncated = true;
    }
    if (wantsResponse(bodies) && blocked('output')) out.responseBodyOmitted = 'guard_blocked';
    else if (wantsResponse(bodies)) {
      const answer = this.streamOutcome ? this.streamText.join('') : this.gw.result;
      if (answer !== undefined) {
        const body = auditBody(answer, maxBodyBytes);
        out.responseBody = body.text;
        if (body.truncated) out.responseBodyTruncated = true;
      }
    }
    return out;
  }
}

function tokensOf(usage: Usage): Json {
  const prompt = tokenCount(usage.prompt_tokens);
  const completion = tokenCount(usage.completion_tokens);
  return {
    prompt,
    completion,
    total: typeof usage.total_tokens === 'number' ? tokenCount(usage.total_tokens) : prompt + completion,
    cached: tokenCount(usage.prompt_tokens_details?.cached_tokens),
    reasoning: tokenCount(usage.completion_tokens_details?.reasoning_tokens),
  };
}

/** The request's cost from the model's pricing, as usage computes it; null for a model without pricing. */
function spentUsd(model: ModelConfig | undefined, metered: Metered): number | null {
  return costUsd(model?.pricing, pricedUsage(metered));
}
