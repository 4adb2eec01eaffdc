/**
 * Azure OpenAI's Responses API, on the OpenAI translator: the v1 API's POST /openai/v1/responses (the base URL
 * already ends in /openai), which takes no api-version and names the deployment in the body's `model`, with the
 * key in `api-key`. Its errors and events are OpenAI's, the unknown previous_response_id included.
 */
import type { ResponsesTranslator } from '../../core/dispatch/provider-responses.ts';
import { createOpenAiResponses } from '../openai/responses.ts';
import { azureDeployment, azureOpenAiHeaders } from './chat.ts';

export const azureOpenAiResponses: ResponsesTranslator = createOpenAiResponses({
  path: () => '/v1/responses',
  headers: azureOpenAiHeaders,
  model: azureDeployment,
});
