/**
 * Retrieved chunks into a chat request: one system message, placed after the request's own system messages (so
 * that the operator's and the client's instructions keep their place), naming each chunk's file so that the model
 * can cite it. The request is a new object: the token estimate of a body is cached per object.
 */
import type { ChatCompletionRequest, ChatMessage } from '../canonical/chat.ts';
import type { RetrievedChunk } from '../pipeline/retrieval.ts';

export type ContextPlacement = 'system' | 'user';

const HEADER = 'Context retrieved from the knowledge base for this conversation. Use it when it is relevant, and name the file id of the passages you rely on.';

export function contextText(chunks: readonly RetrievedChunk[]): string {
  const passages = chunks.map((chunk, i) => `[${i + 1}] file ${chunk.fileId}, part ${chunk.chunkIndex} (score ${chunk.score.toFixed(3)}):\n${chunk.content}`);
  return `${HEADER}\n\n${passages.join('\n\n')}`;
}

/** The text of the last user message: what the retrieval searches for. */
export function lastUserText(request: ChatCompletionRequest): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i]!;
    if (message.role !== 'user') continue;
    if (typeof message.content === 'string') return message.content;
    if (Array.isArray(message.content)) return message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
    return '';
  }
  return '';
}

/**
 * `system`: a system message after the leading system messages. `user`: the context prefixed to the last user
 * message, for models that weigh system text little.
 */
export function withRetrievedContext(request: ChatCompletionRequest, chunks: readonly RetrievedChunk[], placement: ContextPlacement = 'system'): ChatCompletionRequest {
  if (chunks.length === 0) return request;
  const text = contextText(chunks);
  const messages = [...request.messages];
  if (placement === 'system') {
    let at = 0;
    while (at < messages.length && (messages[at]!.role === 'system' || messages[at]!.role === 'developer')) at++;
    messages.splice(at, 0, { role: 'system', content: text });
    return { ...request, messages };
  }
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== 'user') continue;
    const content: ChatMessage['content'] = typeof message.content === 'string' || message.content === null
      ? `${text}\n\n${message.content ?? ''}`
      : [{ type: 'text', text }, ...message.content];
    messages[i] = { ...message, content };
    return { ...request, messages };
  }
  messages.push({ role: 'user', content: text });
  return { ...request, messages };
}

/** A native Responses body (core/canonical/responses-native.ts) with the context before its own instructions. */
export function withContextInstructions(body: Record<string, unknown>, chunks: readonly RetrievedChunk[]): Record<string, unknown> {
  if (chunks.length === 0) return body;
  const own = typeof body.instructions === 'string' && body.instructions !== '' ? `\n\n${body.instructions}` : '';
  return { ...body, instructions: `${contextText(chunks)}${own}` };
}
