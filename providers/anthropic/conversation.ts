/**
 * Canonical messages -> the Messages API's `system` and alternating user / assistant turns of typed blocks.
 * Problems only the caller can fix (unparseable tool arguments, an image URL the API cannot fetch) are
 * refused here with 400 VALIDATION_ERROR naming the message, before any I/O.
 */
import type { ChatMessage, ContentPart, FilePart } from '../../core/canonical/chat.ts';
import { validationError } from '../../core/errors.ts';

export type MessagesBlock = Record<string, unknown> & { type: string };

export interface MessagesTurn {
  role: 'user' | 'assistant';
  content: MessagesBlock[];
}

export interface MessagesConversation {
  /** The text of every system and developer message, in order. */
  system: string[];
  turns: MessagesTurn[];
}

/** Anthropic tool ids must match ^[a-zA-Z0-9_-]+$; ids from other providers are mapped the same way on both sides. */
export function toolUseId(id: string): string {
  const cleaned = id.replace(/[^a-zA-Z0-9_-]/g, '_');
  return cleaned === '' ? '_' : cleaned;
}

export function partsText(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
}

const DATA_URL = /^data:([^;,]+)((?:;[^;,]*)*);base64,(.*)$/s;

function imageBlock(url: string, path: string): MessagesBlock {
  const data = DATA_URL.exec(url);
  if (data) return { type: 'image', source: { type: 'base64', media_type: data[1]!, data: data[3]! } };
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw validationError([{ path, message: 'must be an http(s) URL or a base64 data: URL for provider anthropic' }]);
}

/**
 * A file part -> a document block: an uploaded file by its Files API id (the dispatcher has put the provider's id
 * in place of the gateway's; the request then needs the files beta), or inline bytes as a base64 PDF or plain text.
 */
function documentBlock(part: FilePart, path: string): MessagesBlock {
  const { file_id: fileId, file_data: fileData, filename } = part.file;
  const title = filename ? { title: filename } : {};
  if (fileId !== undefined) return { type: 'document', source: { type: 'file', file_id: fileId }, ...title };
  const data = DATA_URL.exec(fileData ?? '');
  if (data?.[1] === 'application/pdf') return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: data[3]! }, ...title };
  if (data?.[1] === 'text/plain') {
    return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: Buffer.from(data[3]!, 'base64').toString('utf8') }, ...title };
  }
  throw validationError([{ path: `${path}/file/file_data`, message: 'must be a base64 data: URL of application/pdf or text/plain for provider anthropic' }]);
}

const isUploadedDocument = (b: MessagesBlock) => b.type === 'document' && (b.source as { type?: string }).type === 'file';

/** Whether the turns name a file of the Files API (in a tool result too), which needs its beta header. */
export const namesUploadedFile = (turns: MessagesTurn[]) =>
  turns.some((t) => t.content.some((b) => isUploadedDocument(b) || (Array.isArray(b.content) && (b.content as MessagesBlock[]).some(isUploadedDocument))));

function partBlocks(content: ChatMessage['content'], path: string): MessagesBlock[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part: ContentPart, j): MessagesBlock[] => {
    if (part.type === 'image_url') return [imageBlock(part.image_url.url, `${path}/${j}/image_url/url`)];
    if (part.type === 'file') return [documentBlock(part, `${path}/${j}`)];
    // The Messages API rejects empty text blocks.
    return part.text === '' ? [] : [{ type: 'text', text: part.text }];
  });
}

/**
 * Tool-call arguments -> tool_use input, which the Messages API requires to be a JSON object. Arguments the
 * gateway cannot read are the caller's error (400), not something to pass on and have the upstream guess at.
 */
function toolInput(args: string, path: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch {
    throw validationError([{ path, message: 'is not valid JSON (provider anthropic needs the tool call input as a JSON object)' }]);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw validationError([{ path, message: 'must be a JSON object for provider anthropic' }]);
  }
  return value as Record<string, unknown>;
}

function blocksOf(message: ChatMessage, i: number): { role: 'user' | 'assistant'; blocks: MessagesBlock[] } {
  const path = `/messages/${i}`;
  if (message.role === 'tool') {
    if (!message.tool_call_id) throw validationError([{ path: `${path}/tool_call_id`, message: 'is required on tool messages' }]);
    const block: MessagesBlock = { type: 'tool_result', tool_use_id: toolUseId(message.tool_call_id) };
    if (typeof message.content === 'string') {
      if (message.content !== '') block.content = message.content;
    } else {
      const parts = partBlocks(message.content, `${path}/content`);
      if (parts.length > 0) block.content = parts;
    }
    return { role: 'user', blocks: [block] };
  }
  if (message.role === 'assistant') {
    const blocks = partBlocks(message.content, `${path}/content`);
    (message.tool_calls ?? []).forEach((call, j) => {
      blocks.push({
        type: 'tool_use', id: toolUseId(call.id), name: call.function.name,
        input: toolInput(call.function.arguments, `${path}/tool_calls/${j}/function/arguments`),
      });
    });
    return { role: 'assistant', blocks };
  }
  return { role: 'user', blocks: partBlocks(message.content, `${path}/content`) };
}

/**
 * System and developer messages go to `system` wherever they stand (the Messages API has no system turns).
 * Consecutive turns of one role are merged: the API wants user and assistant to alternate, and tool results
 * are user content, so a run of tool messages (and a user message after them) becomes one user turn with the
 * tool_result blocks first, as the API requires.
 */
export function toMessagesConversation(messages: ChatMessage[]): MessagesConversation {
  const system: string[] = [];
  const turns: MessagesTurn[] = [];
  messages.forEach((message, i) => {
    if (message.role === 'system' || message.role === 'developer') {
      system.push(partsText(message.content));
      return;
    }
    const { role, blocks } = blocksOf(message, i);
    const last = turns.at(-1);
    if (last && last.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  });
  return { system, turns };
}
