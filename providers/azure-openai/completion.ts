/**
 * Azure OpenAI's legacy completions (gpt-35-turbo-instruct deployments), on the OpenAI translator with the
 * deployment path, api-version and api-key of its chat (providers/azure-openai/chat.ts); the body's model is
 * not used. The Azure AI model inference API has no completions route, so azure-ai declares none.
 */
import type { CompletionTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { createOpenAiCompletion } from '../openai/completion.ts';
import { AZURE_OPENAI_API_VERSION, azureDeployment, azureOpenAiHeaders } from './chat.ts';

const version = (target: ProviderTarget) => encodeURIComponent((target.options as { apiVersion?: string }).apiVersion ?? AZURE_OPENAI_API_VERSION);

export const azureOpenAiCompletion: CompletionTranslator = createOpenAiCompletion({
  path: (target) => `/deployments/${encodeURIComponent(azureDeployment(target))}/completions?api-version=${version(target)}`,
  headers: azureOpenAiHeaders,
  body(body) {
    delete body.model;
  },
});
