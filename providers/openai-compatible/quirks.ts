/**
 * Provider quirks that a parameter policy cannot say as data: each a small hook on the outgoing body or on
 * an incoming chunk. A catalogue entry names the hooks it needs.
 */
import { createHash } from 'node:crypto';
import type { ChatCompletionChunk, ChatCompletionRequest, ChatMessage, Usage } from '../../core/canonical/chat.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';

export type BodyHook = (body: Record<string, unknown>, request: ChatCompletionRequest, target: ProviderTarget) => void;
export type ChunkHook = (chunk: ChatCompletionChunk) => void;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const MISTRAL_ID = /^[A-Za-z0-9]{9}$/;

/**
 * Mistral accepts only 9-character alphanumeric tool-call ids. Its own answers carry such ids, so callers
 * that echo them back are untouched; any other id (one from OpenAI, or a caller's own) is replaced by a
 * deterministic 9-character digest, the same in the assistant's call and in the tool result that answers it.
 * The answer keeps Mistral's ids, so no mapping back is needed.
 */
export function mistralToolCallId(id: string): string {
  if (MISTRAL_ID.test(id)) return id;
  const digest = createHash('sha256').update(id).digest();
  let out = '';
  for (let i = 0; out.length < 9; i++) out += BASE62[digest[i]! % 62];
  return out;
}

export const mistralBody: BodyHook = (body) => {
  // Mistral's word for "must call a tool" is `any` (it documents `required` as a synonym only lately).
  if (body.tool_choice === 'required') body.tool_choice = 'any';
  const messages = body.messages as ChatMessage[] | undefined;
  if (!messages?.some((m) => m.tool_calls || m.tool_call_id)) return;
  body.messages = messages.map((m) => ({
    ...m,
    ...(m.tool_calls ? { tool_calls: m.tool_calls.map((c) => ({ ...c, id: mistralToolCallId(c.id) })) } : {}),
    ...(m.tool_call_id ? { tool_call_id: mistralToolCallId(m.tool_call_id) } : {}),
  }));
};

/** Groq rejects `name` on messages other than tool results. */
export const groqBody: BodyHook = (body) => {
  const messages = body.messages as ChatMessage[] | undefined;
  if (!messages?.some((m) => m.name !== undefined && m.role !== 'tool')) return;
  body.messages = messages.map(({ name, ...m }) => (m.role === 'tool' && name !== undefined ? { ...m, name } : m));
};

/** Groq streams its usage in `x_groq.usage` on the last chunk (queue and compute times beside the tokens). */
export const groqUsage: ChunkHook = (chunk) => {
  const usage = (chunk.x_groq as { usage?: Usage } | undefined)?.usage;
  if (usage && !chunk.usage) chunk.usage = tokensOnly(usage);
};

/** Moonshot streams the usage inside the finishing choice (`choices[0].usage`) instead of beside it. */
export const choiceUsage: ChunkHook = (chunk) => {
  for (const choice of chunk.choices) {
    const usage = (choice as { usage?: Usage }).usage;
    if (!usage) continue;
    delete (choice as { usage?: Usage }).usage;
    if (!chunk.usage) chunk.usage = tokensOnly(usage);
  }
};

function tokensOnly(usage: Usage): Usage {
  const out: Usage = { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens, total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens };
  if (usage.prompt_tokens_details) out.prompt_tokens_details = usage.prompt_tokens_details;
  if (usage.completion_tokens_details) out.completion_tokens_details = usage.completion_tokens_details;
  return out;
}

/** OpenRouter's web search is its `web` plugin, which works for every model it routes to. */
export const openrouterWebSearch: BodyHook = (body) => {
  if (body.web_search_options === undefined) return;
  body.plugins = [...((body.plugins as unknown[]) ?? []), { id: 'web', ...(body.web_search_options as object) }];
  delete body.web_search_options;
};

/** OpenRouter's optional app attribution headers come from options; see the entry's configSchema. */
export function openrouterHeaders(target: ProviderTarget): Record<string, string> {
  const { siteUrl, appName } = target.options as { siteUrl?: string; appName?: string };
  return { ...(siteUrl ? { 'http-referer': siteUrl } : {}), ...(appName ? { 'x-title': appName } : {}) };
}

/** Zhipu's web search is a server-side tool of type `web_search`; its tool_choice knows only `auto`. */
export const zhipuBody: BodyHook = (body, _request, target) => {
  if (body.web_search_options !== undefined) {
    const search = { enable: true, search_result: true, ...(body.web_search_options as object) };
    body.tools = [...((body.tools as unknown[]) ?? []), { type: 'web_search', web_search: search }];
    delete body.web_search_options;
  }
  const choice = body.tool_choice;
  if (choice === undefined || choice === 'auto') return;
  if (choice === 'none') {
    // No tool may be called: the same as offering none.
    body.tools = ((body.tools as Array<{ type: string }>) ?? []).filter((t) => t.type !== 'function');
    if ((body.tools as unknown[]).length === 0) delete body.tools;
    delete body.tool_choice;
    return;
  }
  throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${target.slug} does not support tool_choice other than auto (it cannot force a tool call)`, { provider: target.slug, parameters: ['tool_choice'] });
};

/** Qwen on DashScope searches the web with `enable_search` (options in `search_options`). */
export const dashscopeWebSearch: BodyHook = (body) => {
  if (body.web_search_options === undefined) return;
  body.enable_search = true;
  if (Object.keys(body.web_search_options as object).length > 0) body.search_options = body.web_search_options;
  delete body.web_search_options;
};

/** GitHub Models asks clients to name the REST API version they speak. */
export const githubHeaders = (): Record<string, string> => ({ accept: 'application/json', 'x-github-api-version': '2022-11-28' });
