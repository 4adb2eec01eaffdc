import { defineProvider } from '../../core/dispatch/provider.ts';
import { geminiBatches } from './batches.ts';
import { geminiApiHeaders, geminiChat, generativeLanguageModelPath } from './chat.ts';
import { embeddingTaskTypeOption, geminiEmbeddings } from './embeddings.ts';
import { geminiError } from './errors.ts';
import { geminiFiles } from './files.ts';
import { googleImageTranslator, IMAGEN_MAX_IMAGES, personGenerationOption } from './images.ts';
import { geminiVideo } from './veo.ts';

export default defineProvider({
  slug: 'gemini',
  family: 'gemini',
  displayName: 'Google Gemini API',
  defaultBaseUrl: 'https://generativelanguage.googleapis.com/v1beta',
  configSchema: {
    type: 'object', additionalProperties: false,
    description: 'Gemini API (Google AI Studio) options. The API key (apiKey) is sent as x-goog-api-key.',
    properties: {
      embeddingTaskType: embeddingTaskTypeOption,
      personGeneration: personGenerationOption,
    },
  },
  capabilities: {
    // n maps to candidateCount; web_search and search_grounding to Google Search grounding.
    chat: { stream: true, tools: true, vision: true, n: true, builtInTools: ['web_search', 'search_grounding', 'code_execution'] },
    // batchEmbedContents, up to 100 inputs a call; outputDimensionality on text-embedding-004 and gemini-embedding-*.
    embeddings: {},
    // Imagen (imagen-*) through :predict, up to 4 images a call; Gemini image models (gemini-*image*) through
    // generateContent, one a call.
    image: { maxImages: IMAGEN_MAX_IMAGES },
    // Veo through predictLongRunning; the operation is polled and its video fetched with the API key.
    video: {},
    // The File API, by its resumable upload protocol.
    files: {},
    // Batch Mode, polled: batches made on the provider are registered by name.
    batch: { submit: false },
  },
  chat: geminiChat,
  embeddings: geminiEmbeddings,
  image: googleImageTranslator({ modelPath: generativeLanguageModelPath, headers: geminiApiHeaders }),
  video: geminiVideo,
  files: geminiFiles,
  batches: geminiBatches,
  passthroughHeaders: geminiApiHeaders,
  mapError: (status, body, target) => geminiError(target, status, body),
});
