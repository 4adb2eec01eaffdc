/**
 * Azure OpenAI's image generation: OpenAI's request under the deployment
 * (`/deployments/{deployment}/images/generations?api-version=`), with the api-key header
 * (providers/openai/images.ts). GPT image deployments need an api-version that serves them (a preview one).
 */
import type { ImageTranslator } from '../../core/dispatch/provider.ts';
import { createOpenAiImages } from '../openai/images.ts';
import { azureOpenAiHeaders, azureOpenAiPath } from './chat.ts';

export const azureOpenAiImages: ImageTranslator = createOpenAiImages({
  path: (target) => azureOpenAiPath(target, 'images/generations'),
  headers: azureOpenAiHeaders,
});
