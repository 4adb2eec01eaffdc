/**
 * AssemblyAI: speech to text, asynchronous (upload, create a transcript, poll it; see transcription.ts), with the
 * bare API key as the `authorization` header. Transcription only: AssemblyAI does not translate speech to English.
 * Errors come as `{error: "message"}`.
 */
import { defineProvider } from '../../core/dispatch/provider.ts';
import { upstreamStatusError } from '../../core/dispatch/upstream-errors.ts';
import { isRecord } from '../shared/transcripts.ts';
import { assemblyAiTranscription, DEFAULT_POLL_INTERVAL_MS } from './transcription.ts';

function assemblyAiErrorMessage(body: unknown, status: number): string {
  if (typeof body === 'string' && body !== '') return body.slice(0, 500);
  const message = isRecord(body) ? [body.error, body.message].find((m): m is string => typeof m === 'string' && m !== '') : undefined;
  return message ?? `HTTP ${status}`;
}

export default defineProvider({
  slug: 'assemblyai',
  family: 'assemblyai',
  displayName: 'AssemblyAI',
  defaultBaseUrl: 'https://api.assemblyai.com/v2',
  configSchema: {
    type: 'object', additionalProperties: false,
    description: 'AssemblyAI options. The API key (apiKey) is sent as the `authorization` header, without a scheme; a model\'s upstreamModel is the speech_model (universal, slam-1, best, nano, ...).',
    properties: {
      pollIntervalMs: {
        type: 'integer', minimum: 1, default: DEFAULT_POLL_INTERVAL_MS,
        description: 'The wait before each poll of an unfinished transcript (GET /transcript/{id}); a call gives up after 600 polls.',
      },
      speakerLabels: {
        type: 'boolean', default: false,
        description: 'speaker_labels: tell the speakers apart; the segments are then AssemblyAI\'s utterances (one per speaker turn) instead of sentences.',
      },
    },
  },
  capabilities: { transcription: {} },
  transcription: assemblyAiTranscription,
  mapError: (status, body, target) => upstreamStatusError(target.slug, status, assemblyAiErrorMessage(body, status), isRecord(body) ? body : undefined),
});
