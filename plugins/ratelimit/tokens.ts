/**
 * Token reservations: before the call a token window is charged an estimate (the prompt as the tokenizer counts
 * it, plus max_tokens or the configured completion estimate, per choice); after the answer the reservation is
 * settled to the real usage.total_tokens.
 */
import { estimatePromptTokens } from '../../core/canonical/estimate.ts';
import type { GatewayState } from '../../core/pipeline/context.ts';

export class TokenReservation {
  /** The prompt estimate, once computed: also what a call with no reported usage settles to. */
  prompt = 0;
  private wanted: Promise<number> | undefined;

  constructor(private readonly gw: GatewayState, private readonly defaultCompletionTokens: number) {}

  /** Whether this request has a canonical body to estimate (the passthrough and local endpoints do not). */
  get applies(): boolean {
    return this.gw.endpoint.kind === 'dispatch';
  }

  /** Reads the body on first use (a 400 or 413 from it ends the request before any window is charged). */
  want(): Promise<number> {
    this.wanted ??= (async () => {
      const { body } = await this.gw.request();
      this.prompt = await estimatePromptTokens(body);
      const completion = body.max_completion_tokens ?? body.max_tokens ?? this.defaultCompletionTokens;
      return this.prompt + completion * Math.max(1, body.n ?? 1);
    })();
    return this.wanted;
  }

  /**
   * The cost charged to a window of this limit: the estimate, capped at the limit so that a generous max_tokens
   * does not make a request impossible to admit. A prompt alone above the limit is charged in full and refused.
   */
  static cost(wanted: number, prompt: number, limit: number): number {
    return prompt > limit ? prompt : Math.min(wanted, limit);
  }
}
