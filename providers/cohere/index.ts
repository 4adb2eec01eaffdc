/** Cohere's v2 API: chat (/v2/chat, its own message, tool and stream-event shapes), /v2/embed and /v2/rerank. */
import { defineProvider } from '../../core/dispatch/provider.ts';
import { COHERE_INPUT_TYPES, cohereEmbeddings, DEFAULT_INPUT_TYPE } from './embed.ts';
import { cohereError } from './errors.ts';
import { cohereRerank } from './rerank.ts';
import { cohereBody, cohereHeaders } from './request.ts';
import { cohereCompletion } from './response.ts';
import { cohereStreamDecoder } from './stream.ts';

export default defineProvider({
  slug: 'cohere',
  family: 'cohere',
  displayName: 'Cohere',
  defaultBaseUrl: 'https://api.cohere.com',
  configSchema: {
    type: 'object', additionalProperties: false,
    description: 'Cohere options. The API key (apiKey) is sent as a bearer token.',
    properties: {
      clientName: { type: 'string', description: 'Sent as X-Client-Name, which Cohere uses to attribute traffic.' },
      safetyMode: { type: 'string', enum: ['CONTEXTUAL', 'STRICT', 'OFF'], description: "Cohere's safety_mode for every chat request (Cohere's default: CONTEXTUAL)." },
      embeddingInputType: {
        type: 'string', enum: [...COHERE_INPUT_TYPES], default: DEFAULT_INPUT_TYPE,
        description: 'input_type of every embeddings request (the OpenAI request has no such field): search_document for texts a vector store holds, search_query for queries against them.',
      },
    },
  },
  capabilities: {
    // No n (one generation per call); images go to vision models (command-a-vision) as image_url parts.
    chat: { stream: true, tools: true, vision: true, n: false },
    embeddings: {},
    rerank: {},
  },
  chat: {
    toUpstream: (request, target, stream) => ({
      method: 'POST', path: '/v2/chat', headers: cohereHeaders(target, stream), body: JSON.stringify(cohereBody(request, target, stream)),
    }),
    fromUpstream: (body, target) => cohereCompletion(body, target),
    streamFormat: 'sse',
    streamDecoder: (target) => cohereStreamDecoder(target),
  },
  embeddings: cohereEmbeddings,
  rerank: cohereRerank,
  mapError: (status, body, target) => cohereError(target, status, body),
});
