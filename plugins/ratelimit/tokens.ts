/**
 * Token reservations: before the call a token window is charged an estimate (the prompt as the tokenizer counts
 * it, plus max_tokens or the configured completion estimate, per choice); after the answer the reservation is
 * settled to the real usage.total_tokens.
 */
import { chatRequestOf } from '../../core/canonical/chat.ts';
import { estimatePromptTokens } from '../../core/canonical/estimate.ts';
import { validationError } from '../../core/errors.ts';
import type { GatewayState } from '../../core/pipeline/context.ts';
import type { PlannedWindow } from './plan.ts';

export class TokenReservation {
  /** The prompt estimate, once computed: also what a call with no reported usage settles to. */
  prompt = 0;
  private wanted: Promise<number> | undefined;
  /** The field the caller sized the completion with; unset when the configured estimate stands in. */
  private sizedBy: 'max_completion_tokens' | 'max_tokens' | undefined;

  constructor(private readonly gw: GatewayState, private readonly defaultCompletionTokens: number) {}

  /** Whether this request has a canonical body to estimate (the passthrough and local endpoints do not). */
  get applies(): boolean {
    return this.gw.endpoint.kind === 'dispatch';
  }

  /** Reads the body on first use (a 400 or 413 from it ends the request before any window is charged). */
  want(): Promise<number> {
    this.wanted ??= (async () => {
      const { body } = chatRequestOf(await this.gw.request());
      this.prompt = await estimatePromptTokens(body);
      this.sizedBy = body.max_completion_tokens !== undefined ? 'max_completion_tokens' : body.max_tokens !== undefined ? 'max_tokens' : undefined;
      const completion = body.max_completion_tokens ?? body.max_tokens ?? this.defaultCompletionTokens;
      return this.prompt + completion * Math.max(1, body.n ?? 1);
    })();
    return this.wanted;
  }

  /**
   * A request that could not fit the window even empty can never be admitted: 400, not a 429 whose Retry-After
   * clients would wait out (and SDKs retry) in vain. Only what the caller chose counts: the prompt, and a
   * max_tokens it set; the configured completion estimate is capped instead (see cost()). Call after want().
   */
  refuseIfNeverFits(window: PlannedWindow, wanted: number): void {
    const which = `the ${window.name} limit of ${window.limit} (${window.level})`;
    if (this.prompt > window.limit) {
      const prompt = this.gw.endpoint.path === '/v1/completions' ? '/prompt' : '/messages';
      throw validationError([{ path: prompt, message: `the prompt alone is about ${this.prompt} tokens, over ${which}` }],
        `The request can never be admitted: its prompt alone is about ${this.prompt} tokens, over ${which}`);
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
