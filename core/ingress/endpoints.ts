/** Every data-plane endpoint the gateway serves, one line each; pipelines attach to these paths. */
import { modelsEndpoint } from '../api/models.ts';
import { chatCompletionsEndpoint } from './chat.ts';
import type { EndpointDefinition } from './endpoint.ts';

export const endpoints: readonly EndpointDefinition[] = [chatCompletionsEndpoint, modelsEndpoint];

export const endpointPaths = (): string[] => endpoints.map((e) => e.path);
