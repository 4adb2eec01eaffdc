/**
 * POST /v1/completions: the chat request body, or the legacy one (`prompt`), answered in the legacy text form
 * (`text_completion`, one choice). It goes through the same pipeline and dispatcher as chat; plugins see the
 * canonical chat request (a prompt is one user message). A prompt goes to a provider's native completions API
 * where it has one (suffix, best_of, an integer logprobs and echo honoured there), else through its chat API
 * (core/dispatch/completion-call.ts).
 */
import { randomUUID } from 'node:crypto';
import {
  chatRequestOf, chatResultOf, type CanonicalChatRequest, type CanonicalRequest, type ChatCompletion, type ChatCompletionChunk, type Usage,
} from '../canonical/chat.ts';
import { isServedNatively, type LegacyCompletionFields } from '../canonical/completion.ts';
import { GatewayError, renderError, toGatewayError, validationError } from '../errors.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import { encodeSse } from '../streaming/sse.ts';
import { compileRequestSchema } from '../validation.ts';
import { parseChatBody, startEventStream } from './chat.ts';
import type { DispatchEndpoint } from './endpoint.ts';
import { completionsRequestSchema, LEGACY_DEFAULT_MAX_TOKENS, textCompletionChunkSchema, textCompletionSchema } from './schemas/completions.ts';

/** `cmpl-` + the upstream id without its own prefix, so logs can be matched; a fresh id when there is none. */
function completionId(upstreamId: string | undefined): string {
  const bare = (upstreamId ?? '').replace(/^(chatcmpl-|cmpl-|msg_)/, '');
  return `cmpl-${bare || randomUUID().replace(/-/g, '')}`;
}

const validateCompletions = compileRequestSchema<Record<string, unknown>>(completionsRequestSchema);

/** The prompts the gateway echoes, by the canonical request they were parsed into (respond has only ctx). */
const echoes = new WeakMap<CanonicalRequest, string>();

const refused = (field: string, message: string) =>
  new GatewayError('CAPABILITY_NOT_SUPPORTED', `${field} ${message}`, { field });

/**
 * The prompt as one text, checked before the schema so that each way a legacy prompt can be out of reach gets
 * its own message; undefined for the chat form. Neither form, or both: 400.
 */
function legacyPrompt(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined; // the schema says so
  const { prompt, messages } = body as Record<string, unknown>;
  if (prompt === undefined) {
    if (messages === undefined) throw validationError([{ path: '/messages', message: 'is required, or prompt (the legacy form)' }]);
    return undefined;
  }
  const at = (message: string) => validationError([{ path: '/prompt', message }]);
  if (messages !== undefined) throw at('cannot be sent with messages: send the chat form (messages) or the legacy one (prompt)');
  if (typeof prompt === 'string') return prompt;
  if (!Array.isArray(prompt)) throw at('must be a string, or an array of one string');
  if (prompt.some((item) => typeof item !== 'string')) throw at('must be text: token arrays are not supported');
  if (prompt.length !== 1) {
    throw at(`must hold exactly one string, got ${prompt.length}: the answer has one choice, so send one request per prompt`);
  }
  return prompt[0] as string;
}

/**
 * The chat form or the legacy form -> the canonical chat request. With a prompt, the legacy fields ride along
 * (`legacy`) for the targets with a native completions API; the dispatcher refuses suffix, best_of above 1 and
 * an integer logprobs on targets without one. The chat form has no prompt to insert or score, so there they are
 * refused here, before any I/O. The legacy answer has exactly one choice, so n (1 to 10, as on chat) is accepted
 * but not sent: one choice generated, one paid for.
 */
export function parseCompletionsBody(body: unknown): CanonicalChatRequest {
  const prompt = legacyPrompt(body);
  const { prompt: _prompt, suffix, echo, best_of: bestOf, logprobs, ...rest } = validateCompletions(body);
  if (echo === true && prompt === undefined) {
    throw validationError([{ path: '/echo', message: 'needs prompt: it echoes the legacy prompt, and messages have none' }]);
  }
  const legacy: Omit<LegacyCompletionFields, 'prompt'> = {
    ...(typeof suffix === 'string' && suffix !== '' ? { suffix } : {}),
    ...(echo === true ? { echo } : {}),
    ...(typeof bestOf === 'number' && bestOf > 1 ? { best_of: bestOf } : {}),
    ...(typeof logprobs === 'number' ? { logprobs } : {}),
  };
  if (prompt === undefined) {
    if (legacy.suffix !== undefined) throw refused('suffix', 'is not supported with messages: send the legacy form (prompt) to a model whose provider has a completions API');
    if (legacy.best_of !== undefined) throw refused('best_of', 'above 1 is not supported with messages: send the legacy form (prompt), or 1, or leave it out');
    if (legacy.logprobs !== undefined) throw refused('logprobs', 'as an integer (legacy log probabilities) is not supported with messages: send true or false');
  }
  const chat: Record<string, unknown> = { ...rest, ...(typeof logprobs === 'boolean' ? { logprobs } : {}) };
  if (prompt !== undefined) {
    chat.messages = [{ role: 'user', content: prompt }];
    if (chat.max_tokens === undefined && chat.max_completion_tokens === undefined) chat.max_tokens = LEGACY_DEFAULT_MAX_TOKENS;
  }
  const request = parseChatBody(chat);
  const { n: _single, ...upstream } = request.body;
  const canonical: CanonicalChatRequest = { ...request, body: upstream, ...(prompt !== undefined ? { legacy: { prompt, ...legacy } } : {}) };
  if (echo === true && prompt !== undefined) echoes.set(canonical, prompt);
  return canonical;
}

/**
 * `echo` is the prompt the text starts with, when the caller asked for it and the gateway does it; `native` is an
 * answer of a completions API, whose legacy logprobs object (or null) is passed on.
 */
export function toTextCompletion(result: ChatCompletion, model: string, echo = '', native = false) {
  const choice = result.choices.find((c) => c.index === 0) ?? result.choices[0];
  const usage = result.usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  const logprobs = native ? { logprobs: choice?.logprobs ?? null } : {};
  return {
    id: completionId(result.id),
    object: 'text_completion' as const,
    created: result.created,
    model,
    choices: [{ text: echo + (choice?.message.content ?? ''), index: 0, ...logprobs, finish_reason: choice?.finish_reason ?? null }],
    usage: { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens, total_tokens: usage.total_tokens },
  };
}

interface TextStreamOptions {
  model: string;
  includeUsage: boolean;
  /** The prompt to send first, when the caller asked for echo. */
  echo: string | undefined;
  signal: AbortSignal;
}

async function* textEvents(chunks: AsyncIterable<ChatCompletionChunk>, { model, includeUsage, echo, signal }: TextStreamOptions): AsyncGenerator<string> {
  const frame = (chunk: ChatCompletionChunk, rest: Record<string, unknown>) =>
    encodeSse(JSON.stringify({ id: completionId(chunk.id), object: 'text_completion', created: chunk.created, model, ...rest }));
  let echoed = echo === undefined;
  try {
    for await (const chunk of chunks) {
      // The echo takes the first upstream chunk's id and time, so the whole stream has one id.
      if (!echoed) {
        echoed = true;
        yield frame(chunk, { choices: [{ text: echo, index: 0, finish_reason: null }] });
      }
      const choice = chunk.choices.find((c) => c.index === 0);
      const text = choice?.delta.content ?? '';
      // Role-only and tool-call deltas carry no text: only text and the finish reason go out.
      if (choice && (text !== '' || choice.finish_reason !== null)) {
        // Only a native completions API sends legacy logprobs objects: they go on with their text.
        const logprobs = choice.logprobs ? { logprobs: choice.logprobs } : {};
        yield frame(chunk, { choices: [{ text, index: 0, ...logprobs, finish_reason: choice.finish_reason }] });
      }
      if (includeUsage && chunk.usage) {
        const { prompt_tokens, completion_tokens, total_tokens }: Usage = chunk.usage;
        yield frame(chunk, { choices: [], usage: { prompt_tokens, completion_tokens, total_tokens } });
      }
    }
    yield 'data: [DONE]\n\n';
  } catch (err) {
    if (signal.aborted) return;
    yield encodeSse(JSON.stringify(renderError(toGatewayError(err), 'legacy')));
  }
}

function routedModel(ctx: GatewayContext, fallback: string): string {
  return ctx.state.gw.target?.upstreamModel ?? fallback;
}

export const completionsEndpoint: DispatchEndpoint = {
  kind: 'dispatch',
  method: 'POST',
  path: '/v1/completions',
  capability: 'completions',
  summary: 'Legacy completion: the chat request body or a legacy prompt, answered as a text_completion with one choice (n is not sent upstream).',
  description: 'A prompt goes to the provider\'s legacy completions API where it has one (OpenAI, Azure OpenAI and the '
    + 'OpenAI-compatible hosts that keep it), with suffix, echo, best_of and an integer logprobs; elsewhere it is sent as '
    + 'one user message to the chat API, echo done by the gateway. max_tokens is 16 unless the caller names a limit. '
    + 'suffix, best_of above 1 or an integer logprobs skip the targets without a completions API; with none left, or '
    + 'with messages, they are refused with 400 CAPABILITY_NOT_SUPPORTED naming the field.',
  errorEnvelope: 'legacy',
  requestSchema: completionsRequestSchema,
  responses: {
    '200': { description: 'The completion; with stream true, a text/event-stream of text_completion chunks ending with [DONE].', schema: textCompletionSchema },
    '200-stream': { description: 'Streaming chunk', schema: textCompletionChunkSchema, contentType: 'text/event-stream' },
  },
  parse: parseCompletionsBody,
  respond(ctx) {
    const gw = ctx.state.gw;
    const request = chatRequestOf(gw.canonical!);
    // A completions API echoes the prompt itself; the gateway does it for answers that came through chat.
    const native = isServedNatively(request);
    const echo = native ? undefined : echoes.get(request);
    if (gw.stream) {
      startEventStream(ctx, textEvents(gw.stream, { model: routedModel(ctx, request.model), includeUsage: request.includeUsage, echo, signal: gw.signal }));
      return;
    }
    const result = chatResultOf(gw.result!);
    ctx.status = 200;
    ctx.body = toTextCompletion(result, routedModel(ctx, result.model), echo, native);
  },
};
