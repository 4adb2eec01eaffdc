/**
 * Azure OpenAI's audio: OpenAI's transcription and translation forms under the deployment
 * (`/deployments/{deployment}/audio/transcriptions?api-version=`), with the api-key header (providers/openai/transcription.ts).
 * The form's model field is the deployment's model name, which Azure ignores in favour of the path.
 */
import type { TranscriptionTranslator } from '../../core/dispatch/provider.ts';
import { createOpenAiTranscription } from '../openai/transcription.ts';
import { azureOpenAiHeaders, azureOpenAiPath } from './chat.ts';

export const azureOpenAiTranscription: TranscriptionTranslator = createOpenAiTranscription({
  path: (task, target) => azureOpenAiPath(target, task === 'translation' ? 'audio/translations' : 'audio/transcriptions'),
  headers: azureOpenAiHeaders,
});
