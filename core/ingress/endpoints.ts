/** Every data-plane endpoint the gateway serves, one line each; pipelines attach to these paths. */
import { modelsEndpoint } from '../api/models.ts';
import { proxyEndpoints } from '../api/proxy.ts';
import { chatCompletionsEndpoint } from './chat.ts';
import { completionsEndpoint } from './completions.ts';
import { embeddingsEndpoint } from './embeddings.ts';
import type { EndpointDefinition } from './endpoint.ts';
import { messagesEndpoint } from './messages.ts';
import { rerankEndpoint } from './rerank.ts';

export const endpoints: readonly EndpointDefinition[] = [chatCompletionsEndpoint, messagesEndpoint, completionsEndpoint, embeddingsEndpoint, rerankEndpoint, modelsEndpoint, ...proxyEndpoints];

/** The route names pipelines.yaml may list (the passthrough's several methods share `/proxy`). */
export const endpointPaths = (): string[] => [...new Set(endpoints.map((e) => e.path))];
