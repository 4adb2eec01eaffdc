/** The embeddings and rerank fixtures on Cohere (v2) and IBM watsonx.ai (its IAM token endpoint faked beside). */
import cohere from '../../providers/cohere/index.ts';
import watsonx from '../../providers/watsonx/index.ts';
import { runModalityConformance } from './modalities.ts';
import { cohereEmbedWire, watsonxEmbeddingsWire } from './wires/embeddings-own.ts';
import { cohereRerankWire, watsonxRerankWire } from './wires/rerank.ts';
import { iamRoute } from './wires/watsonx.ts';

runModalityConformance({
  provider: cohere,
  credential: 'co-conformance',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}\napiKey: co-conformance`,
  embeddings: { wire: cohereEmbedWire, model: 'embed-english-v3.0', dimensionsModel: 'embed-v4.0', dimensions: 256 },
  rerank: { wire: cohereRerankWire, model: 'rerank-v3.5' },
});

const TOKEN = 'iam-conformance-token';
runModalityConformance({
  provider: watsonx,
  // The API must see the exchanged token, never the API key.
  credential: TOKEN,
  providerBlock: (baseUrl) => [
    `baseUrl: ${baseUrl}/ml/v1`,
    'apiKey: ibm-cloud-conformance-key',
    'options:',
    '  projectId: proj-1',
    `  iamUrl: ${baseUrl}/identity/token`,
  ].join('\n'),
  extraRoutes: iamRoute({ apiKey: 'ibm-cloud-conformance-key', token: () => TOKEN }),
  embeddings: { wire: watsonxEmbeddingsWire, model: 'ibm/slate-125m-english-rtrvr-v2', dimensionsModel: null },
  rerank: { wire: watsonxRerankWire, model: 'cross-encoder/ms-marco-minilm-l-12-v2', reportsSearchUnits: false },
});
