/**
 * rag: retrieval-augmented generation over the gateway's own vector stores. Before dispatch, the last user
 * message is searched in the configured stores (narrowed per organization, department and key: config.ts) and
 * the best chunks go into the canonical request (core/retrieval/inject.ts): as a system message for chat,
 * Messages and completions (a legacy prompt gets them as a prefix), before the instructions of a Responses
 * request served natively. The chunks used go to the usage record (gw.retrieval).
 */
import type { ChatCompletionRequest } from '../../core/canonical/chat.ts';
import { definePlugin } from '../../core/pipeline/plugin.ts';
import type { RetrievedChunk } from '../../core/pipeline/retrieval.ts';
import { contextText, lastUserText, withContextInstructions, withRetrievedContext } from '../../core/retrieval/inject.ts';
import { configSchema, settingsFor, type RagConfig } from './config.ts';

const PLUGIN = 'rag';
/** One warning per this many ms at most, per pipeline entry: a down embeddings provider would log every request. */
const WARN_EVERY_MS = 60_000;

export default definePlugin<RagConfig>({
  name: PLUGIN,
  description: 'Retrieval-augmented generation: the best chunks of the configured vector stores are injected into chat, Messages, completions and Responses requests before dispatch.',
  configSchema,
  setup(config, services) {
    let lastWarning = -Infinity;
    return async (ctx, next) => {
      const gw = ctx.state.gw;
      if (gw.endpoint.kind !== 'dispatch') return next();
      const request = await gw.request();
      if (request.modality !== 'chat') return next();
      const settings = settingsFor(config, gw.caller);
      const query = lastUserText(request.body);
      if (!settings.enabled || query.trim() === '') return next();

      let chunks: RetrievedChunk[];
      try {
        chunks = await services.retrieval.search({
          caller: gw.caller, storeIds: settings.vectorStoreIds, query, topK: settings.topK, purpose: PLUGIN, unknownStores: 'skip', signal: gw.signal,
          ...(settings.threshold === undefined ? {} : { threshold: settings.threshold }),
        });
      } catch (err) {
        if (config.onRetrievalError === 'closed' || gw.signal.aborted) throw err;
        const now = services.clock.now();
        if (now - lastWarning >= WARN_EVERY_MS) {
          lastWarning = now;
          services.logger.warn({ err, requestId: gw.requestId }, 'rag: retrieval failed; requests go without context (onRetrievalError: open)');
        }
        return next();
      }
      if (chunks.length > 0) {
        const body: ChatCompletionRequest = withRetrievedContext(request.body, chunks, settings.placement);
        request.body = body;
        if (request.legacy) request.legacy = { ...request.legacy, prompt: `${contextText(chunks)}\n\n${request.legacy.prompt}` };
        if (request.native) {
          request.native = {
            body: withContextInstructions(request.native.body, chunks),
            fallback: request.native.fallback && withContextInstructions(request.native.fallback, chunks),
          };
        }
        const used = (gw.retrieval ??= { chunks: [] });
        used.chunks.push(...chunks.map(({ storeId, fileId, chunkIndex, score }) => ({ storeId, fileId, chunkIndex, score })));
      }
      await next();
    };
  },
});
