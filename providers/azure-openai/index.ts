/**
 * azure-openai (deployments on *.openai.azure.com) and azure-ai (the model inference API on
 * *.services.ai.azure.com/models). Both base URLs hold the resource name, so neither has a default.
 */
import { defineProvider } from '../../core/dispatch/provider.ts';
import { azureOpenAiBatches } from './batches.ts';
import { AZURE_AI_API_VERSION, AZURE_OPENAI_API_VERSION, azureAiChat, azureAiHeaders, azureOpenAiChat, azureOpenAiHeaders } from './chat.ts';
import { azureOpenAiCompletion } from './completion.ts';
import { azureAiEmbeddings, azureOpenAiEmbeddings } from './embeddings.ts';
import { azureErrorFromBody } from './errors.ts';
import { azureOpenAiFiles } from './files.ts';
import { azureOpenAiImages } from './images.ts';
import { azureOpenAiResponses } from './responses.ts';
import { azureOpenAiSpeech } from './speech.ts';
import { azureOpenAiTranscription } from './transcription.ts';

export const azureOpenAi = defineProvider({
  slug: 'azure-openai',
  family: 'azure-openai',
  displayName: 'Azure OpenAI',
  configSchema: {
    type: 'object', additionalProperties: false,
    description: 'Azure OpenAI options. No default base URL: set baseUrl to https://{resource}.openai.azure.com/openai; the key goes in the api-key header.',
    properties: {
      apiVersion: {
        type: 'string', default: AZURE_OPENAI_API_VERSION, pattern: '^\\d{4}-\\d{2}-\\d{2}(-preview)?$',
        description: `The api-version query parameter (default ${AZURE_OPENAI_API_VERSION}, the latest GA version; a -preview version enables preview features).`,
      },
      deployments: {
        type: 'object', additionalProperties: { type: 'string', minLength: 1 },
        description: 'Upstream model name -> deployment name, for deployments not named after their model; by default the deployment is the upstream model.',
      },
      nativeResponses: {
        type: 'boolean', default: true,
        description: 'POST /v1/responses goes to the Responses API (the v1 API: /openai/v1/responses); false serves it through chat, for a resource or region without it.',
      },
    },
  },
  capabilities: {
    chat: { stream: true, tools: true, vision: true, n: true }, completion: { stream: true }, responses: { stream: true }, embeddings: {}, files: {},
    transcription: {}, translation: {}, speech: {}, image: {},
    // Its Batch API is OpenAI's: polled, for batches made on Azure and registered by id.
    batch: { submit: false },
  },
  chat: azureOpenAiChat,
  completion: azureOpenAiCompletion,
  responses: azureOpenAiResponses,
  embeddings: azureOpenAiEmbeddings,
  transcription: azureOpenAiTranscription,
  speech: azureOpenAiSpeech,
  image: azureOpenAiImages,
  files: azureOpenAiFiles,
  batches: azureOpenAiBatches,
  passthroughHeaders: azureOpenAiHeaders,
  mapError: (status, body, target) => azureErrorFromBody(target, status, body),
});

export const azureAi = defineProvider({
  slug: 'azure-ai',
  family: 'azure-openai',
  displayName: 'Azure AI Foundry (model inference)',
  configSchema: {
    type: 'object', additionalProperties: false,
    description: 'Azure AI model inference options. No default base URL: set baseUrl to https://{resource}.services.ai.azure.com/models.',
    properties: {
      apiVersion: {
        type: 'string', default: AZURE_AI_API_VERSION, pattern: '^\\d{4}-\\d{2}-\\d{2}(-preview)?$',
        description: `The api-version query parameter (default ${AZURE_AI_API_VERSION}).`,
      },
      auth: {
        type: 'string', enum: ['api-key', 'bearer'], default: 'api-key',
        description: 'How the key is sent: the api-key header (a resource key), or Authorization: Bearer (an Entra ID token).',
      },
      extraParameters: {
        type: 'string', enum: ['pass-through', 'drop', 'error'],
        description: 'Sent as the extra-parameters header: what the service does with parameters its API does not define (its default: error).',
      },
    },
  },
  capabilities: { chat: { stream: true, tools: true, vision: true, n: true }, embeddings: {} },
  chat: azureAiChat,
  embeddings: azureAiEmbeddings,
  passthroughHeaders: azureAiHeaders,
  mapError: (status, body, target) => azureErrorFromBody(target, status, body),
});

export const azureProviders = [azureOpenAi, azureAi];
