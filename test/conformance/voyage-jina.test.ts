/** The embeddings and rerank fixtures on Voyage AI and Jina AI, which have no chat. */
import jina from '../../providers/jina/index.ts';
import voyage from '../../providers/voyage/index.ts';
import { runModalityConformance } from './modalities.ts';
import { jinaEmbeddingsWire, voyageEmbeddingsWire } from './wires/embeddings-own.ts';
import { jinaRerankWire, voyageRerankWire } from './wires/rerank.ts';

runModalityConformance({
  provider: voyage,
  credential: 'pa-conformance',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1\napiKey: pa-conformance`,
  embeddings: { wire: voyageEmbeddingsWire, model: 'voyage-3', dimensionsModel: 'voyage-3.5', dimensions: 256 },
  rerank: { wire: voyageRerankWire, model: 'rerank-2.5', reportsSearchUnits: false },
});

runModalityConformance({
  provider: jina,
  credential: 'jina_conformance',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1\napiKey: jina_conformance`,
  embeddings: { wire: jinaEmbeddingsWire, model: 'jina-embeddings-v2-base-en', dimensionsModel: 'jina-embeddings-v3' },
  rerank: { wire: jinaRerankWire, model: 'jina-reranker-v2-base-multilingual', reportsSearchUnits: false },
});
