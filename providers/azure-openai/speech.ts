/**
 * Azure OpenAI's text to speech: OpenAI's request under the deployment
 * (`/deployments/{deployment}/audio/speech?api-version=`), with the api-key header (providers/openai/speech.ts).
 */
import type { SpeechTranslator } from '../../core/dispatch/provider.ts';
import { createOpenAiSpeech } from '../openai/speech.ts';
import { azureOpenAiHeaders, azureOpenAiPath } from './chat.ts';

export const azureOpenAiSpeech: SpeechTranslator = createOpenAiSpeech({
  path: (target) => azureOpenAiPath(target, 'audio/speech'),
  headers: azureOpenAiHeaders,
});
