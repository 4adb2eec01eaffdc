/**
 * The text of a chat-style request, and the request with its text rewritten (redaction). A request arrives in
 * up to three views of the same words: the canonical chat body (every route: chat, Messages, completions,
 * Responses), a legacy completion's prompt, and a Responses body for a provider's native API (its instructions
 * and input items, and the fallback with the whole conversation). All are rewritten, or one would leak.
 */
import type { CanonicalChatRequest, ChatMessage, Role } from '../../core/canonical/chat.ts';

export interface MessageText { role: Role; text: string }

/** The text of each message (string content, and the text parts of part lists), in order. */
export function messageTexts(messages: readonly ChatMessage[]): MessageText[] {
  const out: MessageText[] = [];
  for (const message of messages) {
    if (typeof message.content === 'string') out.push({ role: message.role, text: message.content });
    else if (Array.isArray(message.content)) {
      for (const part of message.content) if (part.type === 'text') out.push({ role: message.role, text: part.text });
    }
  }
  return out;
}

const mapContent = (content: ChatMessage['content'], map: (text: string) => string): ChatMessage['content'] => {
  if (typeof content === 'string') return map(content);
  if (!Array.isArray(content)) return content;
  return content.map((part) => (part.type === 'text' ? { ...part, text: map(part.text) } : part));
};

/** Keys of native Responses items that hold text a caller wrote. */
const NATIVE_TEXT_KEYS = new Set(['text', 'content', 'output']);

function mapNative(value: unknown, map: (text: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => mapNative(v, map));
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[key] = typeof v === 'string' && NATIVE_TEXT_KEYS.has(key) ? map(v) : mapNative(v, map);
  return out;
}

function mapNativeBody(body: Record<string, unknown>, map: (text: string) => string): Record<string, unknown> {
  const out = { ...body };
  if (typeof out.instructions === 'string') out.instructions = map(out.instructions);
  if (typeof out.input === 'string') out.input = map(out.input);
  else if (Array.isArray(out.input)) out.input = mapNative(out.input, map);
  return out;
}

/** Rewrites every view of the request's text in place (a new body object: estimates are cached per body). */
export function rewriteRequest(request: CanonicalChatRequest, map: (text: string) => string): void {
  request.body = { ...request.body, messages: request.body.messages.map((m) => ({ ...m, content: mapContent(m.content, map) })) };
  if (request.legacy) request.legacy = { ...request.legacy, prompt: map(request.legacy.prompt), ...(request.legacy.suffix !== undefined ? { suffix: map(request.legacy.suffix) } : {}) };
  if (request.native) {
    request.native = {
      body: mapNativeBody(request.native.body, map),
      fallback: request.native.fallback && mapNativeBody(request.native.fallback, map),
    };
  }
}

/** Roles whose text an injection would come through: what the caller's users and tools wrote, not the system prompt. */
export const UNTRUSTED_ROLES: ReadonlySet<Role> = new Set(['user', 'tool']);
