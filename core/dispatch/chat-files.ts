/**
 * File parts of a chat request name gateway files (`file-<uuid>`); a provider reads only its own ids. Once the
 * dispatcher has chosen a target, the request it sends names the provider's id for each file, resolved in the
 * registry (resolveFile) against the caller's tenant and the target's provider: an unknown or expired id is 404
 * NOT_FOUND, a file of another provider 400 FILE_PROVIDER_MISMATCH, both before any upstream call. The canonical
 * request keeps the gateway ids, so plugins, logs and answers never see a provider's.
 */
import type { ChatCompletionRequest, ChatMessage, ContentPart } from '../canonical/chat.ts';
import type { Queryable } from '../store/database.ts';
import { resolveFile } from '../store/files.ts';

const partsOf = (message: ChatMessage): ContentPart[] => (Array.isArray(message.content) ? message.content : []);

export const hasFileParts = (request: ChatCompletionRequest): boolean =>
  request.messages.some((m) => partsOf(m).some((p) => p.type === 'file'));

/** The distinct gateway file ids the request names, in order. */
export function fileIdsOf(request: ChatCompletionRequest): string[] {
  const ids = new Set<string>();
  for (const message of request.messages) {
    for (const part of partsOf(message)) if (part.type === 'file' && part.file.file_id !== undefined) ids.add(part.file.file_id);
  }
  return [...ids];
}

/** A copy of the request naming the provider's ids; the request itself when it names no file. */
export async function withProviderFileIds(
  db: Queryable, tenantId: string, request: ChatCompletionRequest, provider: string, now: number,
): Promise<ChatCompletionRequest> {
  const ids = fileIdsOf(request);
  if (ids.length === 0) return request;
  const providerIds = new Map<string, string>();
  for (const id of ids) providerIds.set(id, await resolveFile(db, tenantId, id, provider, now));
  const translate = (part: ContentPart): ContentPart =>
    (part.type === 'file' && part.file.file_id !== undefined ? { ...part, file: { ...part.file, file_id: providerIds.get(part.file.file_id)! } } : part);
  return {
    ...request,
    messages: request.messages.map((m) => (partsOf(m).some((p) => p.type === 'file') ? { ...m, content: partsOf(m).map(translate) } : m)),
  };
}

/**
 * One dispatch's translations, per provider: targets of one provider share theirs, and a request naming no file
 * costs no query. Rejections are kept too, so every target of a provider gets the same answer.
 */
export function providerFileIds(db: Queryable, tenantId: string, request: ChatCompletionRequest, now: () => number): (provider: string) => Promise<ChatCompletionRequest> {
  const byProvider = new Map<string, Promise<ChatCompletionRequest>>();
  return (provider) => {
    let translated = byProvider.get(provider);
    if (!translated) byProvider.set(provider, (translated = withProviderFileIds(db, tenantId, request, provider, now())));
    return translated;
  };
}
