/**
 * OpenAI's legacy completions API (POST /completions: prompt, suffix, echo, best_of, an integer logprobs), for
 * the models only it serves (gpt-3.5-turbo-instruct, davinci-002) and for the hosts of the family that keep it.
 * Its `text_completion` answers and chunks come back as canonical chat: the text as content (or delta.content),
 * the legacy logprobs object as the choice's logprobs. `createOpenAiCompletion` is the family's one translator:
 * Azure and the OpenAI-compatible catalogue pass a path and headers.
 */
import type { ChatCompletion, ChatCompletionChunk, FinishReason, Usage } from '../../core/canonical/chat.ts';
import type { CompletionTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { malformed, openaiHeaders } from './chat.ts';
import { openaiErrorFromBody } from './errors.ts';
import { openAiStreamDecoder } from './stream.ts';

export interface OpenAiCompletionHooks {
  /** The request path under the base URL, query included (default `/completions`). */
  path?(target: ProviderTarget): string;
  /** The request headers, credential included (default: Bearer and OpenAI's organization/project). */
  headers?(target: ProviderTarget): Record<string, string>;
  /** Adjusts the outgoing body in place (Azure names the model by its deployment, not in the body). */
  body?(body: Record<string, unknown>): void;
}

interface WireChoice { text?: unknown; index?: unknown; finish_reason?: unknown; logprobs?: unknown }
interface WireCompletion { id?: unknown; created?: unknown; model?: unknown; choices?: unknown; usage?: unknown }

const FINISH = new Set<FinishReason>(['stop', 'length', 'content_filter', 'tool_calls', 'function_call']);
const finishOf = (value: unknown): FinishReason | null => (FINISH.has(value as FinishReason) ? value as FinishReason : null);

function usageOf(value: unknown): Usage | undefined {
  const u = value as Partial<Usage> | null | undefined;
  if (!u || typeof u.prompt_tokens !== 'number' || typeof u.completion_tokens !== 'number') return undefined;
  return { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, total_tokens: typeof u.total_tokens === 'number' ? u.total_tokens : u.prompt_tokens + u.completion_tokens };
}

/** The parts of an answer or chunk every choice shares, checked. */
function parts(target: ProviderTarget, value: unknown, what: string): { head: WireCompletion; choices: WireChoice[] } {
  const head = value as WireCompletion | null;
  if (!head || typeof head !== 'object' || !Array.isArray(head.choices)) throw malformed(target, what);
  const choices = head.choices as Array<WireChoice | null>;
  if (choices.some((c) => !c || typeof c !== 'object' || (c.text !== undefined && typeof c.text !== 'string'))) throw malformed(target, what);
  return { head, choices: choices as WireChoice[] };
}

const meta = (head: WireCompletion, target: ProviderTarget) => ({
  id: typeof head.id === 'string' ? head.id : '',
  created: typeof head.created === 'number' ? head.created : Math.floor(Date.now() / 1000),
  model: typeof head.model === 'string' ? head.model : target.upstreamModel,
});

const indexOf = (choice: WireChoice, position: number) => (typeof choice.index === 'number' ? choice.index : position);

export function createOpenAiCompletion(hooks: OpenAiCompletionHooks = {}): CompletionTranslator {
  return {
    toUpstream(request, target, stream) {
      const body: Record<string, unknown> = { ...request, model: target.upstreamModel };
      // Usage at the end of every stream, as on chat: asked for always, dropped again for callers who did not ask.
      if (stream) Object.assign(body, { stream: true, stream_options: { include_usage: true } });
      hooks.body?.(body);
      return {
        method: 'POST',
        path: hooks.path?.(target) ?? '/completions',
        headers: hooks.headers?.(target) ?? openaiHeaders(target),
        body: JSON.stringify(body),
      };
    },

    fromUpstream(body, target) {
      const { head, choices } = parts(target, body, 'completion');
      const completion: ChatCompletion = {
        ...meta(head, target),
        object: 'chat.completion',
        choices: choices.map((choice, position) => ({
          index: indexOf(choice, position),
          message: { role: 'assistant' as const, content: typeof choice.text === 'string' ? choice.text : '' },
          finish_reason: finishOf(choice.finish_reason),
          logprobs: choice.logprobs ?? null,
        })),
      };
      const usage = usageOf(head.usage);
      if (usage) completion.usage = usage;
      return completion;
    },

    streamFormat: 'sse',

    streamDecoder(target, request) {
      return openAiStreamDecoder(target, request, {
        malformed,
        error: openaiErrorFromBody,
        chunk(raw) {
          const { head, choices } = parts(target, raw, 'stream chunk');
          const chunk: ChatCompletionChunk = {
            ...meta(head, target),
            object: 'chat.completion.chunk',
            choices: choices.map((choice, position) => ({
              index: indexOf(choice, position),
              delta: { content: typeof choice.text === 'string' ? choice.text : '' },
              finish_reason: finishOf(choice.finish_reason),
              ...(choice.logprobs ? { logprobs: choice.logprobs } : {}),
            })),
          };
          const usage = usageOf(head.usage);
          if (usage) chunk.usage = usage;
          return chunk;
        },
      });
    },
  };
}

export const openaiCompletion: CompletionTranslator = createOpenAiCompletion();
