/**
 * What makes two requests the same: the exact key (a hash of everything that can change the answer) and the
 * semantic partition (the same, without the conversation, whose meaning the embedding compares instead).
 *
 * Both are SHA-256 over a canonical JSON (object keys sorted, at every depth) of: the tenant, the endpoint kind,
 * the model after the caller's policy overrides, the provider a request is pinned to, the legacy completion
 * fields, and every request parameter except IGNORED_PARAMETERS. The partition leaves out the messages, except
 * the system and developer ones: instructions must match exactly, since "answer in French" and "answer in
 * English" embed alike.
 */
import { createHash } from 'node:crypto';
import type { CanonicalChatRequest, ChatMessage } from '../../core/canonical/chat.ts';

export type EndpointKind = 'chat' | 'messages' | 'completions';

/** The chat-style endpoints the plugin serves; every other route passes through it untouched. */
const KIND_OF_PATH: Readonly<Record<string, EndpointKind>> = {
  '/v1/chat/completions': 'chat',
  '/v1/messages': 'messages',
  '/v1/completions': 'completions',
};

export const endpointKind = (path: string): EndpointKind | undefined => KIND_OF_PATH[path];

/**
 * Parameters that change how an answer is delivered or tracked, never what it says:
 * - stream, stream_options: the answer is stored whole and replayed either way (as a result or as chunks);
 * - user, safety_identifier: the end user, for the provider's abuse monitoring;
 * - metadata, store: tags and retention of the provider's stored completions;
 * - prompt_cache_key, cache_control: hints to the provider's own prompt cache;
 * - model: replaced by the model the request resolves to, so that aliases of one model share entries.
 */
export const IGNORED_PARAMETERS: readonly string[] = [
  'stream', 'stream_options', 'user', 'safety_identifier', 'metadata', 'store', 'prompt_cache_key', 'cache_control', 'model',
];

/** Bumped when the key's recipe changes, so that old entries are never read with another meaning. */
const KEY_VERSION = 1;

/** Longer conversations are not embedded: embedding models cap their input, and a cut text would match wrongly. */
export const MAX_CONVERSATION_CHARS = 8000;

/** JSON with object keys sorted at every depth: equal values, equal text. Undefined members are left out. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).filter((key) => record[key] !== undefined).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

const isInstruction = (message: ChatMessage) => message.role === 'system' || message.role === 'developer';

export interface KeyInput {
  tenant: string;
  kind: EndpointKind;
  /** The model id the request resolves to, after the caller's policy overrides. */
  model: string;
  request: CanonicalChatRequest;
  /** The model conversations are embedded with (null: exact only): vectors of two models never compare. */
  embeddingModel: string | null;
}

/** What both keys hold besides the conversation: the parameters without those that do not change the answer. */
function common({ tenant, kind, model, request }: KeyInput) {
  const params: Record<string, unknown> = { ...request.body };
  for (const name of IGNORED_PARAMETERS) delete params[name];
  const { messages, ...rest } = params as { messages: ChatMessage[] };
  return { messages, fields: { v: KEY_VERSION, tenant, kind, model, provider: request.provider, params: rest } };
}

/** The exact key: the hit path's one hash. */
export function exactKey(input: KeyInput): string {
  const { messages, fields } = common(input);
  return sha256(canonicalJson({ ...fields, legacy: input.request.legacy, messages }));
}

/** The semantic partition: the exact key's contents without the conversation, with the embedding model. */
export function partitionKey(input: KeyInput): string {
  const { messages, fields } = common(input);
  const { prompt: _prompt, ...legacy } = input.request.legacy ?? { prompt: '' };
  return sha256(canonicalJson({
    ...fields, legacy: input.request.legacy ? legacy : undefined, instructions: messages.filter(isInstruction), embeddingModel: input.embeddingModel,
  }));
}

/** Why a request is neither looked up nor stored, or undefined when it may be. */
export function uncacheable(request: CanonicalChatRequest): string | undefined {
  // Log probabilities describe one sampling of the answer; a replay would claim them for another.
  if (request.body.logprobs === true || request.legacy?.logprobs !== undefined) return 'logprobs';
  return undefined;
}

function messageText(message: ChatMessage): string | null {
  const content = message.content;
  let text = '';
  if (typeof content === 'string') text = content;
  else if (Array.isArray(content)) {
    // An image or a file is not in the text: two conversations about different pictures would embed alike.
    if (content.some((part) => part.type !== 'text')) return null;
    text = content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
  }
  const calls = (message.tool_calls ?? []).map((call) => `${call.function.name}(${call.function.arguments})`);
  return [text, ...calls].filter((piece) => piece !== '').join('\n');
}

/**
 * The conversation as the embedding sees it: one `role: text` line per message, instructions left out (they are
 * in the partition), tool calls as `name(arguments)` and tool results as their text. Null when it cannot be
 * compared by meaning: an image or a file in it, no text, or longer than MAX_CONVERSATION_CHARS.
 */
export function conversationText(messages: readonly ChatMessage[]): string | null {
  const lines: string[] = [];
  for (const message of messages) {
    if (isInstruction(message)) continue;
    const text = messageText(message);
    if (text === null) return null;
    lines.push(`${message.role}: ${text}`);
  }
  const joined = lines.join('\n');
  if (joined.trim() === '' || joined.length > MAX_CONVERSATION_CHARS) return null;
  return joined;
}
