import { defineProvider } from '../../core/dispatch/provider.ts';
import { anthropicErrorFromBody, messagesOptionProperties } from '../anthropic/index.ts';
import { geminiError } from '../gemini/errors.ts';
import { authorizeVertex } from './auth.ts';
import { vertexBatches } from './batches.ts';
import { headers, modelPath, resolved, VERTEX_ANTHROPIC_VERSION, vertexChat } from './chat.ts';
import { vertexEmbeddingOptions, vertexEmbeddings } from './embeddings.ts';
import { vertexFiles } from './files.ts';
import { vertexRankingOptions, vertexRerank } from './rerank.ts';
import { vertexStorageOptions } from './storage.ts';
import { vertexVideo, vertexVideoOptions } from './video.ts';
import { embeddingTaskTypeOption } from '../gemini/embeddings.ts';
import { googleImageTranslator, IMAGEN_MAX_IMAGES, personGenerationOption } from '../gemini/images.ts';

export default defineProvider({
  slug: 'vertex-ai',
  family: 'vertex',
  displayName: 'Google Vertex AI',
  // Filled from options.location and options.project when baseUrl is not set.
  defaultBaseUrl: 'https://{location}-aiplatform.googleapis.com/v1/projects/{project}/locations/{location}',
  configSchema: {
    type: 'object', additionalProperties: false,
    description: 'Vertex AI options. The credential is apiKey (an OAuth access token, sent as Bearer) or serviceAccountKey.',
    properties: {
      project: { type: 'string', minLength: 1, description: 'Google Cloud project id; fills {project} in the default base URL.' },
      location: { type: 'string', minLength: 1, description: 'Vertex AI location (us-central1, europe-west4, global, ...); fills {location} in the default base URL. "global" is served by aiplatform.googleapis.com.' },
      serviceAccountKey: {
        type: ['object', 'string'],
        description: 'A service-account key file (JSON, as a mapping or as text, e.g. ${GOOGLE_SA_KEY}): client_email and private_key sign an RS256 JWT assertion exchanged at token_uri (default https://oauth2.googleapis.com/token) for a cloud-platform access token, cached until it expires. Takes precedence over apiKey.',
      },
      anthropicVersion: { type: 'string', minLength: 1, default: VERTEX_ANTHROPIC_VERSION, description: 'anthropic_version sent in the body of Claude requests (rawPredict).' },
      embeddingTaskType: embeddingTaskTypeOption,
      ...vertexEmbeddingOptions,
      ...vertexRankingOptions,
      ...vertexStorageOptions,
      ...vertexVideoOptions,
      personGeneration: personGenerationOption,
      // Claude models (upstream model claude-*) speak the Messages API: its options apply to them.
      ...messagesOptionProperties,
    },
  },
  capabilities: {
    // n (candidateCount) and search_grounding are Gemini's; Claude models refuse them before any I/O.
    chat: { stream: true, tools: true, vision: true, n: true, builtInTools: ['web_search', 'search_grounding', 'code_execution', 'computer_use'] },
    // The text embedding models' :predict, up to 250 inputs a call (gemini-embedding-*: one).
    embeddings: {},
    // The Discovery Engine ranking API (semantic-ranker-* models), on its own host.
    rerank: {},
    // Imagen (imagen-*) through :predict, up to 4 images a call; Gemini image models through generateContent.
    image: { maxImages: IMAGEN_MAX_IMAGES },
    // Veo through predictLongRunning and fetchPredictOperation; videos land in Cloud Storage and are fetched with the token.
    video: {},
    // Cloud Storage objects in options.gcsBucket, uploaded in 8 MiB chunks (resumable).
    files: {},
    // Batch prediction jobs made outside the gateway, registered by name and polled.
    batch: { submit: false },
  },
  chat: vertexChat,
  embeddings: vertexEmbeddings,
  rerank: vertexRerank,
  image: googleImageTranslator({ modelPath: (target) => resolved(target, modelPath(target, 'google')), headers: (target) => headers(target) }),
  video: vertexVideo,
  files: vertexFiles,
  batches: vertexBatches,
  authorize: authorizeVertex,
  // Vertex's own errors are Google's {error: {code, message, status}}; Claude's are Anthropic's {type: error, error}.
  mapError: (status, body, target) => ((body as { type?: unknown } | null)?.type === 'error'
    ? anthropicErrorFromBody(target, status, body)
    : geminiError(target, status, body)),
});
