import { defineProvider } from '../../core/dispatch/provider.ts';
import { openaiBatches } from './batches.ts';
import { openaiChat, openaiHeaders } from './chat.ts';
import { openaiCompletion } from './completion.ts';
import { openaiEmbeddings } from './embeddings.ts';
import { openaiErrorFromBody } from './errors.ts';
import { openaiFiles } from './files.ts';
import { openaiImages } from './images.ts';
import { openaiRealtime } from './realtime.ts';
import { openaiResponses } from './responses.ts';
import { openaiSpeech } from './speech.ts';
import { openaiTranscription } from './transcription.ts';
import { openaiVideo } from './video.ts';

export default defineProvider({
  slug: 'openai',
  family: 'openai',
  displayName: 'OpenAI',
  defaultBaseUrl: 'https://api.openai.com/v1',
  configSchema: {
    type: 'object', additionalProperties: false,
    description: 'OpenAI options.',
    properties: {
      organization: { type: 'string', description: 'Sent as OpenAI-Organization.' },
      project: { type: 'string', description: 'Sent as OpenAI-Project.' },
      nativeResponses: {
        type: 'boolean', default: true,
        description: 'POST /v1/responses goes to the Responses API (POST /responses); false serves it through chat, for a base URL that has no Responses API.',
      },
    },
  },
  capabilities: {
    chat: { stream: true, tools: true, vision: true, n: true, files: true, builtInTools: ['web_search'] },
    completion: { stream: true },
    responses: { stream: true, builtInTools: ['web_search', 'web_search_preview'] },
    embeddings: {},
    transcription: {},
    translation: {},
    speech: {},
    image: {},
    video: {},
    files: {},
    batch: { submit: true },
    realtime: {},
  },
  chat: openaiChat,
  completion: openaiCompletion,
  responses: openaiResponses,
  embeddings: openaiEmbeddings,
  transcription: openaiTranscription,
  speech: openaiSpeech,
  image: openaiImages,
  video: openaiVideo,
  files: openaiFiles,
  batches: openaiBatches,
  realtime: openaiRealtime,
  passthroughHeaders: openaiHeaders,
  mapError: (status, body, target) => openaiErrorFromBody(target, status, body),
});
