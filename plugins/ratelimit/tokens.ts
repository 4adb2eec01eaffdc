/**
 * Token reservations: before the call a token window is charged an estimate, settled to the real
 * usage.total_tokens after the answer. The estimate is the request's input as the tokenizer counts it
 * (core/canonical/units.ts): a chat prompt, an embeddings request's inputs, a rerank's query and documents; a chat
 * request adds max_tokens or the configured completion estimate, per choice. Embeddings and rerank generate no
 * tokens, so their input is their whole estimate.
 */
import type { CanonicalRequest } from '../../core/canonical/chat.ts';
import { validationError } from '../../core/errors.ts';
import type { GatewayState } from '../../core/pipeline/context.ts';
import { estimateInputTokens, estimateInputTokensNow } from '../../core/canonical/units.ts';
import type { PlannedWindow } from './plan.ts';

/** Where the input of each modality is, and what to call it, for a request that can never fit. */
function inputOf(request: CanonicalRequest, route: string): { path: string; name: string } {
  switch (request.modality) {
    case 'chat': return route === '/v1/completions' ? { path: '/prompt', name: 'prompt' } : { path: '/messages', name: 'prompt' };
    case 'embeddings': return { path: '/input', name: 'input' };
    case 'rerank': return { path: '/documents', name: 'query with its documents' };
    case 'transcription': case 'translation': return { path: '/file', name: 'audio' };
    case 'speech': return { path: '/input', name: 'input' };
    case 'image': case 'video': return { path: '/prompt', name: 'prompt' };
  }
}

export class TokenReservation {
  /**
   * The input estimate (a chat prompt, embeddings inputs, a rerank's query and documents), once computed: also
   * what a call with no reported usage settles to.
   */
  prompt = 0;
  private wanted: Promise<number> | undefined;
  /** Where the input is in the body, once read. */
  private input = { path: '/messages', name: 'prompt' };
  /** The field the caller sized the completion with; unset when the configured estimate stands in. */
  private sizedBy: 'max_completion_tokens' | 'max_tokens' | undefined;

  constructor(private readonly gw: GatewayState, private readonly defaultCompletionTokens: number) {}

  /** Whether this request has a canonical body to estimate (the passthrough and local endpoints do not). */
  get applies(): boolean {
    return this.gw.endpoint.kind === 'dispatch';
  }

  /** Reads the body on first use (a 400 or 413 from it ends the request before any window is charged). */
  want(): Promise<number> {
    this.wanted ??= this.gw.request().then((request) => {
      const prompt = estimateInputTokensNow(request);
      return prompt !== undefined ? this.wantedOf(request, prompt) : estimateInputTokens(request).then((counted) => this.wantedOf(request, counted));
    });
    return this.wanted;
  }

  /**
   * want within the call: when the body has been read (by a plugin before this one) and the tokenizer is loaded.
   * Undefined otherwise: call want.
   */
  wantNow(): number | undefined {
    const request = this.gw.canonical;
    if (!request) return undefined;
    const prompt = estimateInputTokensNow(request);
    return prompt === undefined ? undefined : this.wantedOf(request, prompt);
  }

  private wantedOf(request: CanonicalRequest, prompt: number): number {
    this.input = inputOf(request, this.gw.endpoint.path);
    this.prompt = prompt;
    if (request.modality !== 'chat') return prompt;
    const { body } = request;
    this.sizedBy = body.max_completion_tokens !== undefined ? 'max_completion_tokens' : body.max_tokens !== undefined ? 'max_tokens' : undefined;
    const completion = body.max_completion_tokens ?? body.max_tokens ?? this.defaultCompletionTokens;
    return prompt + completion * Math.max(1, body.n ?? 1);
  }

  /**
   * A request that could not fit the window even empty can never be admitted: 400, not a 429 whose Retry-After
   * clients would wait out (and SDKs retry) in vain. Only what the caller chose counts: the input, and a
   * max_tokens it set; the configured completion estimate is capped instead (see cost()). Call after want().
   */
  refuseIfNeverFits(window: PlannedWindow, wanted: number): void {
    const which = `the ${window.name} limit of ${window.limit} (${window.level})`;
    if (this.prompt > window.limit) {
      const { path, name } = this.input;
      throw validationError([{ path, message: `the ${name} alone is about ${this.prompt} tokens, over ${which}` }],
        `The request can never be admitted: its ${name} alone is about ${this.prompt} tokens, over ${which}`);
    }
    if (this.sizedBy && wanted > window.limit) {
      throw validationError([{ path: `/${this.sizedBy}`, message: `the prompt and ${this.sizedBy} reserve ${wanted} tokens, over ${which}` }],
        `The request can never be admitted: it reserves ${wanted} tokens (prompt and ${this.sizedBy}, per choice), over ${which}; lower ${this.sizedBy}`);
    }
  }

  /**
   * The cost charged to a window of this limit: the estimate, capped at the limit so that a generous max_tokens
   * does not make a request impossible to admit (refuseIfNeverFits has refused what the caller sized too big).
   */
  static cost(wanted: number, prompt: number, limit: number): number {
    return prompt > limit ? prompt : Math.min(wanted, limit);
  }
}
