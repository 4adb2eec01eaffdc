/** Every data-plane endpoint the gateway serves, one line each; pipelines attach to these paths. */
import { chatCompletionsEndpoint } from './chat.ts';
import type { EndpointDefinition } from './endpoint.ts';

export const endpoints: readonly EndpointDefinition[] = [chatCompletionsEndpoint];

export const endpointPaths = (): string[] => endpoints.map((e) => e.path);
