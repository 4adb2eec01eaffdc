/**
 * The rerank fixtures on the providers whose rerank is their only modality here beyond chat and embeddings:
 * the OpenAI-compatible hosts with a rerank API, Vertex AI's ranking API and Bedrock's rerank models.
 */
import assert from 'node:assert/strict';
import bedrock from '../../providers/bedrock/index.ts';
import { compatibleProviderBySlug } from '../../providers/openai-compatible/index.ts';
import vertex from '../../providers/vertex-ai/index.ts';
import type { RecordedUpstreamRequest } from './kit.ts';
import { runModalityConformance, type RerankWire } from './modalities.ts';
import { bedrockCohereRerankWire, nvidiaRankingWire, siliconflowRerankWire, togetherRerankWire, vertexRankingWire, vllmRerankWire } from './wires/rerank.ts';

const compatible = (slug: string, wire: RerankWire, model: string, { keyless = false, reportsSearchUnits = false } = {}) => runModalityConformance({
  provider: compatibleProviderBySlug(slug),
  credential: `sk-conformance-${slug}`,
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1${keyless ? '' : `\napiKey: sk-conformance-${slug}`}`,
  rerank: {
    wire: keyless ? { ...wire, assertAuth: (req: RecordedUpstreamRequest) => assert.equal(req.headers.authorization, undefined) } : wire,
    model,
    reportsSearchUnits,
  },
});

compatible('together-ai', togetherRerankWire, 'Salesforce/Llama-Rank-V1');
compatible('siliconflow', siliconflowRerankWire, 'BAAI/bge-reranker-v2-m3', { reportsSearchUnits: true });
compatible('vllm', vllmRerankWire, 'BAAI/bge-reranker-base', { keyless: true });
compatible('nvidia-nim', nvidiaRankingWire, 'nvidia/llama-3.2-nv-rerankqa-1b-v2');

runModalityConformance({
  provider: vertex,
  credential: 'ya29.conformance',
  providerBlock: (baseUrl) => [`baseUrl: ${baseUrl}/v1/projects/p1/locations/us-central1`, 'apiKey: ya29.conformance', 'options:', '  project: p1', `  rankingUrl: ${baseUrl}/v1`].join('\n'),
  rerank: { wire: vertexRankingWire, model: 'semantic-ranker-default@latest', reportsSearchUnits: false },
});

runModalityConformance({
  provider: bedrock,
  credential: 'bedrock-api-key-conformance',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}\napiKey: bedrock-api-key-conformance\noptions:\n  region: us-east-1`,
  rerank: { wire: bedrockCohereRerankWire, model: 'cohere.rerank-v3-5:0', reportsSearchUnits: false },
});
