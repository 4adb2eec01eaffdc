/** The conformance kit on Azure OpenAI (deployments) and Azure AI model inference: chat and embeddings. */
import assert from 'node:assert/strict';
import { azureAi, azureOpenAi } from '../../providers/azure-openai/index.ts';
import { runConformance } from './kit.ts';
import { azureWire } from './wires/azure-openai.ts';
import { openAiEmbeddingsWire } from './wires/openai-embeddings.ts';

const apiKeyHeader = (req: { headers: Record<string, unknown> }, credential: string) => assert.equal(req.headers['api-key'], credential);

runConformance({
  provider: azureOpenAi,
  wire: azureWire({ model: 'deployment', pathPrefix: '/openai', apiVersion: '2024-10-21' }),
  credential: 'azure-conformance-key',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/openai\napiKey: azure-conformance-key`,
  embeddings: {
    wire: openAiEmbeddingsWire({ model: 'deployment', path: '/openai', apiVersion: '2024-10-21', rejects: ['model'], assertAuth: apiKeyHeader }),
    model: 'text-embedding-ada-002',
    dimensionsModel: 'text-embedding-3-large',
  },
});

runConformance({
  provider: azureAi,
  wire: azureWire({ model: 'body', pathPrefix: '/models', apiVersion: '2024-05-01-preview' }),
  credential: 'azure-ai-conformance-key',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/models\napiKey: azure-ai-conformance-key`,
  embeddings: {
    wire: openAiEmbeddingsWire({ path: '/models/embeddings', apiVersion: '2024-05-01-preview', assertAuth: apiKeyHeader }),
    model: 'multilingual-e5-large',
    dimensionsModel: 'embed-v-4-0',
  },
});
