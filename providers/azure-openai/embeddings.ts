/**
 * Azure's two OpenAI-shaped embeddings APIs, on the OpenAI translator (the same paths, headers and api-versions
 * as their chat, providers/azure-openai/chat.ts):
 * - Azure OpenAI: `/deployments/{deployment}/embeddings?api-version=`, the body's model unused. Its
 *   text-embedding-3 deployments take `dimensions` and both encodings.
 * - Azure AI model inference: `/embeddings?api-version=` with the model in the body; `dimensions` and
 *   `encoding_format` (base64 among others) are in its API, and the model refuses what it cannot do.
 */
import type { EmbeddingsTranslator } from '../../core/dispatch/provider.ts';
import { createOpenAiEmbeddings, OPENAI_DIMENSIONS_MODELS } from '../openai/embeddings.ts';
import { azureAiHeaders, azureAiPath, azureOpenAiHeaders, azureOpenAiPath } from './chat.ts';

export const azureOpenAiEmbeddings: EmbeddingsTranslator = createOpenAiEmbeddings({
  path: (target) => azureOpenAiPath(target, 'embeddings'),
  headers: azureOpenAiHeaders,
  body(body) {
    delete body.model;
  },
});

/**
 * The model inference API hosts many publishers' embedding models; which of them shorten their vectors is the
 * model's to say. OpenAI's text-embedding-3 and Cohere's embed-v4 do; others are refused here before any I/O.
 */
const AZURE_AI_DIMENSIONS_MODELS = /(^|\/)(text-embedding-3-|embed-v-?4)/i;

export const azureAiEmbeddings: EmbeddingsTranslator = createOpenAiEmbeddings({
  path: (target) => azureAiPath(target, 'embeddings'),
  headers: azureAiHeaders,
  supportsDimensions: (model) => OPENAI_DIMENSIONS_MODELS.test(model) || AZURE_AI_DIMENSIONS_MODELS.test(model),
});
