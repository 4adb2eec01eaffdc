/**
 * The OpenAI family's chat stream -> canonical chunks (OpenAI, Azure and the OpenAI-compatible catalogue), and
 * the rule for how such a stream may end. `data: [DONE]` is its terminator. A stream that closes without it is
 * still whole when every choice it started has its finish reason (the terminator alone was lost, or the
 * server never sends one, as watsonx does); anything shorter was cut off and fails as UPSTREAM_ERROR, so the
 * caller gets the endpoint's error event instead of a [DONE] that says the answer is complete.
 */
import type { ChatCompletionChunk, ChatCompletionRequest } from '../../core/canonical/chat.ts';
import type { ChatStreamDecoder, ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';

/** Which choices a stream started and which of them it finished. */
export class ChoiceEndings {
  private readonly started = new Set<number>();
  private readonly finished = new Set<number>();

  see(choices: unknown): void {
    if (!Array.isArray(choices)) return;
    choices.forEach((choice: { index?: unknown; finish_reason?: unknown } | null, position) => {
      const index = typeof choice?.index === 'number' ? choice.index : position;
      this.started.add(index);
      if (choice?.finish_reason !== null && choice?.finish_reason !== undefined) this.finished.add(index);
    });
  }

  /** At least one choice, and each with its finish reason. */
  get complete(): boolean {
    return this.started.size > 0 && [...this.started].every((index) => this.finished.has(index));
  }
}

export function cutShort(target: ProviderTarget, missing: string): GatewayError {
  return new GatewayError('UPSTREAM_ERROR', `${target.slug} closed the stream before ${missing}: the answer was cut short`, { provider: target.slug });
}

export interface OpenAiStreamHooks {
  malformed(target: ProviderTarget, what: string): GatewayError;
  /** An error object sent as a stream event -> the gateway error. */
  error(target: ProviderTarget, status: number, body: unknown): GatewayError;
  /** Adjusts a parsed chunk; null drops it. */
  chunk?(chunk: ChatCompletionChunk, request: ChatCompletionRequest): ChatCompletionChunk | null;
}

export function openAiStreamDecoder(target: ProviderTarget, request: ChatCompletionRequest, hooks: OpenAiStreamHooks): ChatStreamDecoder {
  const endings = new ChoiceEndings();
  let done = false;
  return {
    event(event) {
      if (event.data === '[DONE]') {
        done = true;
        return { chunks: [], done: true };
      }
      if (event.data === '') return { chunks: [] };
      let parsed: unknown;
      try {
        parsed = JSON.parse(event.data);
      } catch {
        throw hooks.malformed(target, 'stream event');
      }
      const value = parsed as ChatCompletionChunk & { error?: unknown };
      if (!value || typeof value !== 'object') throw hooks.malformed(target, 'stream chunk');
      if (value.error) throw hooks.error(target, 502, value);
      if (!Array.isArray(value.choices)) throw hooks.malformed(target, 'stream chunk');
      endings.see(value.choices);
      const chunk = hooks.chunk ? hooks.chunk(value, request) : value;
      return { chunks: chunk ? [chunk] : [] };
    },
    end() {
      if (done || endings.complete) return [];
      throw cutShort(target, 'data: [DONE]');
    },
  };
}
