/**
 * The file_search built-in tool, served by the gateway for every chat provider (spec: "gateway retrieves top
 * chunks from the referenced gateway-owned stores, injects them as system context, and removes the tool before the
 * provider call"). Config {vectorStoreIds: string[], topK?: 1-50 (default 5), threshold?: 0-1}. The query is the
 * last user message. Store ids the caller's tenant does not have: 404 NOT_FOUND.
 */
import type { BuiltInTool, ChatCompletionRequest } from '../canonical/chat.ts';
import type { GatewayToolHandler } from '../dispatch/dispatcher.ts';
import { validationError } from '../errors.ts';
import type { RetrievalService } from '../pipeline/retrieval.ts';
import { lastUserText, withRetrievedContext } from './inject.ts';

export const DEFAULT_TOP_K = 5;
const MAX_STORES = 100;

interface FileSearchConfig {
  vectorStoreIds: string[];
  topK: number;
  threshold?: number;
}

const isFileSearch = (tool: NonNullable<ChatCompletionRequest['tools']>[number]): tool is BuiltInTool => tool.type === 'built_in' && tool.built_in === 'file_search';

/** The tool's config, checked: out-of-range values are refused, never clamped. */
function configOf(tool: BuiltInTool, index: number): FileSearchConfig {
  const path = `/tools/${index}/config`;
  const config = (tool.config ?? {}) as Record<string, unknown>;
  const problems: Array<{ path: string; message: string }> = [];
  const ids = config.vectorStoreIds;
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_STORES || !ids.every((id) => typeof id === 'string' && id.length > 0)) {
    problems.push({ path: `${path}/vectorStoreIds`, message: `must be 1 to ${MAX_STORES} vector store ids` });
  }
  const topK = config.topK ?? DEFAULT_TOP_K;
  if (!Number.isInteger(topK) || (topK as number) < 1 || (topK as number) > 50) problems.push({ path: `${path}/topK`, message: 'must be an integer from 1 to 50' });
  const threshold = config.threshold;
  if (threshold !== undefined && (typeof threshold !== 'number' || !(threshold >= 0 && threshold <= 1))) problems.push({ path: `${path}/threshold`, message: 'must be a number from 0 to 1' });
  const unknown = Object.keys(config).filter((key) => !['vectorStoreIds', 'topK', 'threshold'].includes(key));
  for (const key of unknown) problems.push({ path: `${path}/${key}`, message: 'is not a file_search option (vectorStoreIds, topK, threshold)' });
  if (problems.length > 0) throw validationError(problems);
  return { vectorStoreIds: ids as string[], topK: topK as number, ...(threshold === undefined ? {} : { threshold: threshold as number }) };
}

export function fileSearchTool(retrieval: RetrievalService): GatewayToolHandler {
  return async (request, gw) => {
    const tools = request.tools ?? [];
    const configs = tools.flatMap((tool, index) => (isFileSearch(tool) ? [configOf(tool, index)] : []));
    const query = lastUserText(request);
    let current: ChatCompletionRequest = { ...request };
    const rest = tools.filter((tool) => !isFileSearch(tool));
    if (rest.length > 0) current.tools = rest;
    else {
      delete current.tools;
      delete current.tool_choice; // it could only name the tool just removed, or ask for a tool where none is left
    }
    if (query.trim() === '') return current;
    for (const config of configs) {
      const chunks = await retrieval.search({
        caller: gw.caller, storeIds: config.vectorStoreIds, query, topK: config.topK, purpose: 'file_search', unknownStores: 'fail', signal: gw.signal,
        ...(config.threshold === undefined ? {} : { threshold: config.threshold }),
      });
      current = withRetrievedContext(current, chunks);
      const used = (gw.retrieval ??= { chunks: [] });
      used.chunks.push(...chunks.map(({ storeId, fileId, chunkIndex, score }) => ({ storeId, fileId, chunkIndex, score })));
    }
    return current;
  };
}
