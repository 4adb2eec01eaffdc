/** The conformance kit on Azure OpenAI (deployments) and Azure AI model inference. */
import { azureAi, azureOpenAi } from '../../providers/azure-openai/index.ts';
import { runConformance } from './kit.ts';
import { azureWire } from './wires/azure-openai.ts';

runConformance({
  provider: azureOpenAi,
  wire: azureWire({ model: 'deployment', pathPrefix: '/openai', apiVersion: '2024-10-21' }),
  credential: 'azure-conformance-key',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/openai\napiKey: azure-conformance-key`,
});

runConformance({
  provider: azureAi,
  wire: azureWire({ model: 'body', pathPrefix: '/models', apiVersion: '2024-05-01-preview' }),
  credential: 'azure-ai-conformance-key',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/models\napiKey: azure-ai-conformance-key`,
});
