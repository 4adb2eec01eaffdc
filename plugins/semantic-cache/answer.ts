/**
 * A stored answer is a canonical ChatCompletion, whichever way it came: a complete answer as it was, a stream
 * assembled from its chunks (AnswerAssembler). It is replayed either way too: as the result, or as chunks
 * (replayChunks) that end with usage like a live canonical stream. So a streamed miss serves a later non-streamed
 * hit, and the other way round.
 */
import type { ChatCompletion, ChatCompletionChunk, ChunkToolCallDelta, FinishReason, ToolCall, Usage } from '../../core/canonical/chat.ts';

type Choice = ChatCompletion['choices'][number];
type Message = Choice['message'];
type Delta = ChatCompletionChunk['choices'][number]['delta'];

/** Text fields of a message that arrive in pieces (content, refusal, a provider's reasoning_content). */
const TEXT_FIELDS_SKIPPED = new Set(['role', 'tool_calls']);

/** Which answers may be stored: those that finished normally, and tool calls when the operator allows them. */
export function storable(answer: ChatCompletion, cacheToolCalls: boolean): boolean {
  if (answer.choices.length === 0) return false;
  return answer.choices.every((choice) => {
    const calls = (choice.message.tool_calls?.length ?? 0) > 0 || choice.finish_reason === 'tool_calls' || choice.finish_reason === 'function_call';
    if (calls) return cacheToolCalls && choice.finish_reason !== 'content_filter' && choice.finish_reason !== null;
    return choice.finish_reason === 'stop' || choice.finish_reason === 'length';
  });
}

/** The answer as a canonical stream: per choice its role, its texts, its tool calls and its finish; then usage. */
export function replayChunks(answer: ChatCompletion): ChatCompletionChunk[] {
  const base = {
    id: answer.id, object: 'chat.completion.chunk' as const, created: answer.created, model: answer.model,
    ...(answer.system_fingerprint !== undefined ? { system_fingerprint: answer.system_fingerprint } : {}),
  };
  const chunk = (index: number, delta: Delta, finish: FinishReason | null = null): ChatCompletionChunk =>
    ({ ...base, choices: [{ index, delta, finish_reason: finish }] });
  const chunks: ChatCompletionChunk[] = [];
  for (const choice of answer.choices) {
    const message = choice.message as Message & Record<string, unknown>;
    // As a live stream begins: the role, with an empty text when the message has text (null for a tool call).
    chunks.push(chunk(choice.index, typeof message.content === 'string' ? { role: 'assistant', content: '' } : { role: 'assistant' }));
    for (const [field, value] of Object.entries(message)) {
      if (TEXT_FIELDS_SKIPPED.has(field) || typeof value !== 'string' || value === '') continue;
      chunks.push(chunk(choice.index, { [field]: value } as Delta));
    }
    const calls = message.tool_calls ?? [];
    if (calls.length > 0) {
      const deltas: ChunkToolCallDelta[] = calls.map((call, index) => ({ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments } }));
      chunks.push(chunk(choice.index, { tool_calls: deltas }));
    }
    chunks.push(chunk(choice.index, {}, choice.finish_reason));
  }
  const usage: Usage = answer.usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  chunks.push({ ...base, choices: [], usage });
  return chunks;
}

export async function* replayStream(answer: ChatCompletion): AsyncGenerator<ChatCompletionChunk> {
  for (const chunk of replayChunks(answer)) yield chunk;
}

interface ChoiceParts {
  texts: Map<string, string>;
  calls: Map<number, ToolCall>;
  finish: FinishReason | null;
}

/**
 * Builds the ChatCompletion a stream stands for, chunk by chunk, as a response stage sees them; counts the
 * characters it holds so that an answer past the size bound stops being collected (`overflowed`).
 */
export class AnswerAssembler {
  private head: Pick<ChatCompletion, 'id' | 'created' | 'model'> & { system_fingerprint?: string | null } | undefined;
  private readonly choices = new Map<number, ChoiceParts>();
  private usage: Usage | undefined;
  private chars = 0;
  overflowed = false;

  constructor(private readonly maxChars: number) {}

  push(chunk: ChatCompletionChunk): void {
    if (this.overflowed) return;
    this.head ??= { id: chunk.id, created: chunk.created, model: chunk.model, ...(chunk.system_fingerprint !== undefined ? { system_fingerprint: chunk.system_fingerprint as string | null } : {}) };
    if (chunk.usage) this.usage = chunk.usage;
    for (const choice of chunk.choices) {
      const parts = this.choices.get(choice.index) ?? { texts: new Map(), calls: new Map(), finish: null };
      this.choices.set(choice.index, parts);
      for (const [field, value] of Object.entries(choice.delta)) {
        if (TEXT_FIELDS_SKIPPED.has(field) || typeof value !== 'string') continue;
        parts.texts.set(field, (parts.texts.get(field) ?? '') + value);
        this.chars += value.length;
      }
      for (const delta of choice.delta.tool_calls ?? []) this.addCall(parts, delta);
      if (choice.finish_reason) parts.finish = choice.finish_reason;
    }
    if (this.chars > this.maxChars) this.overflowed = true;
  }

  private addCall(parts: ChoiceParts, delta: ChunkToolCallDelta): void {
    const call = parts.calls.get(delta.index) ?? { id: '', type: 'function' as const, function: { name: '', arguments: '' } };
    if (delta.id) call.id = delta.id;
    if (delta.function?.name) call.function.name += delta.function.name;
    if (delta.function?.arguments) {
      call.function.arguments += delta.function.arguments;
      this.chars += delta.function.arguments.length;
    }
    parts.calls.set(delta.index, call);
  }

  /** The whole answer, or null when nothing came or it grew past the bound. */
  answer(): ChatCompletion | null {
    if (!this.head || this.overflowed) return null;
    const choices: Choice[] = [...this.choices.entries()].sort(([a], [b]) => a - b).map(([index, parts]) => {
      const message: Message & Record<string, unknown> = { role: 'assistant', content: parts.texts.get('content') ?? null };
      for (const [field, text] of parts.texts) if (field !== 'content') message[field] = text;
      const calls = [...parts.calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
      if (calls.length > 0) message.tool_calls = calls;
      return { index, message, finish_reason: parts.finish };
    });
    return { ...this.head, object: 'chat.completion', choices, ...(this.usage ? { usage: this.usage } : {}) };
  }
}
