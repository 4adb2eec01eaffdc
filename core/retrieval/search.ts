/**
 * RetrievalService (core/pipeline/retrieval.ts) over the vector-store tables: the query is embedded once per
 * embedding model among the stores (a store is searched only with vectors of the model its chunks were embedded
 * with), each group searched, and the hits merged by score.
 */
import type { EmbeddingService } from '../pipeline/embed.ts';
import type { RetrievalQuery, RetrievalService, RetrievedChunk } from '../pipeline/retrieval.ts';
import type { Database } from '../store/database.ts';
import { searchChunks } from '../store/vector-chunks.ts';
import { findVectorStore, vectorStoreNotFound } from '../store/vector-stores.ts';

export interface RetrievalDeps {
  db: Database;
  embeddings: EmbeddingService;
  now: () => number;
}

export function createRetrievalService(deps: RetrievalDeps): RetrievalService {
  return {
    async search(query: RetrievalQuery): Promise<RetrievedChunk[]> {
      const tenantId = query.caller?.tenantId ?? 'default';
      const now = deps.now();
      const byModel = new Map<string, string[]>();
      for (const id of new Set(query.storeIds)) {
        const store = await findVectorStore(deps.db, tenantId, id, now);
        if (!store) {
          if (query.unknownStores === 'fail') throw vectorStoreNotFound(id);
          continue;
        }
        const ids = byModel.get(store.embeddingModel) ?? [];
        ids.push(store.id);
        byModel.set(store.embeddingModel, ids);
      }
      const hits: RetrievedChunk[] = [];
      for (const [model, storeIds] of byModel) {
        const embedded = await deps.embeddings.embed({
          model, input: [query.query], caller: query.caller, applyPolicy: false, purpose: query.purpose,
          ...(query.signal ? { signal: query.signal } : {}),
        });
        const found = await searchChunks(deps.db, {
          tenantId, storeIds, vector: embedded.vectors[0]!, topK: query.topK, now,
          ...(query.threshold === undefined ? {} : { threshold: query.threshold }),
        });
        hits.push(...found);
      }
      return hits.sort((a, b) => b.score - a.score).slice(0, query.topK);
    },
  };
}
