/**
 * Azure OpenAI's legacy completions (gpt-35-turbo-instruct deployments), on the OpenAI translator with the
 * deployment path, api-version and api-key of its chat (providers/azure-openai/chat.ts); the body's model is
 * not used. The Azure AI model inference API has no completions route, so azure-ai declares none.
 */
import type { CompletionTranslator } from '../../core/dispatch/provider.ts';
import { createOpenAiCompletion } from '../openai/completion.ts';
import { azureOpenAiHeaders, azureOpenAiPath } from './chat.ts';

export const azureOpenAiCompletion: CompletionTranslator = createOpenAiCompletion({
  path: (target) => azureOpenAiPath(target, 'completions'),
  headers: azureOpenAiHeaders,
  body(body) {
    delete body.model;
  },
});
