/** One canonical message -> Gemini parts (text, inlineData / fileData, functionCall, functionResponse). */
import type { ChatMessage, ContentPart } from '../../core/canonical/chat.ts';
import { GatewayError, validationError } from '../../core/errors.ts';
import { signatureOf } from './tool-ids.ts';

export type GeminiPart = Record<string, unknown>;
export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

const IMAGE_TYPES: Record<string, string> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', heic: 'image/heic', heif: 'image/heif',
};

const invalid = (path: string, message: string) => validationError([{ path, message }]);

/**
 * data: URLs are sent inline. http(s) and gs:// URLs become fileData: Gemini fetches them itself, and needs
 * their MIME type, which is guessed from the extension (JPEG when there is none).
 */
function imagePart(url: string, path: string): GeminiPart {
  if (url.startsWith('data:')) {
    const match = /^data:([^;,]+)((?:;[^;,]*)*),(.*)$/s.exec(url);
    if (!match) throw invalid(path, 'not a valid data: URL');
    const base64 = match[2]!.split(';').includes('base64');
    const data = base64 ? match[3]!.replace(/\s+/g, '') : Buffer.from(decodeURIComponent(match[3]!), 'utf8').toString('base64');
    return { inlineData: { mimeType: match[1], data } };
  }
  if (/^(https?|gs):\/\//i.test(url)) {
    const extension = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(new URL(url).pathname)?.[1]?.toLowerCase() ?? '';
    return { fileData: { mimeType: IMAGE_TYPES[extension] ?? 'image/jpeg', fileUri: url } };
  }
  throw invalid(path, 'an image URL must be a data:, http(s): or gs:// URL');
}

function contentParts(content: ChatMessage['content'], path: string): GeminiPart[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  return content.map((part: ContentPart, i) => {
    if (part.type === 'text') return { text: part.text };
    // The dispatcher refuses file parts for a provider that does not declare chat.files; this is its backstop.
    if (part.type === 'file') throw new GatewayError('CAPABILITY_NOT_SUPPORTED', 'Provider gemini does not support file inputs', { provider: 'gemini', capability: 'files' });
    return imagePart(part.image_url.url, `${path}/${i}/image_url/url`);
  });
}

/** A tool result must be an object for Gemini: other JSON values (and plain text) are wrapped. */
function functionResponse(content: ChatMessage['content']): Record<string, unknown> {
  const raw = typeof content === 'string' ? content : (content ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('');
  let value: unknown = raw;
  try {
    value = JSON.parse(raw);
  } catch {
    // plain text
  }
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { content: value };
}

function parseArguments(text: string, path: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  try {
    const value = JSON.parse(text) as unknown;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw invalid(path, 'tool call arguments must be a JSON object');
}

/** `name` is the function a tool message answers (resolved by the caller from the earlier call). */
export function geminiMessageParts(message: ChatMessage, name: string | undefined, index: number): GeminiPart[] {
  const path = `/messages/${index}`;
  if (message.role === 'tool') return [{ functionResponse: { name, response: functionResponse(message.content) } }];
  const parts = contentParts(message.content, `${path}/content`);
  if (message.role !== 'assistant') return parts.length > 0 ? parts : [{ text: '' }];
  (message.tool_calls ?? []).forEach((call, i) => {
    const signature = signatureOf(call.id);
    parts.push({
      functionCall: { name: call.function.name, args: parseArguments(call.function.arguments, `${path}/tool_calls/${i}/function/arguments`) },
      ...(signature ? { thoughtSignature: signature } : {}),
    });
  });
  return parts.length > 0 ? parts : [{ text: '' }];
}
