/** Every data-plane endpoint the gateway serves, one line each; pipelines attach to these paths. */
import { budgetEndpoint } from '../api/budget.ts';
import { modelsEndpoint } from '../api/models.ts';
import { proxyEndpoints } from '../api/proxy.ts';
import { usageEndpoint } from '../api/usage.ts';
import { chatCompletionsEndpoint } from './chat.ts';
import { completionsEndpoint } from './completions.ts';
import type { EndpointDefinition } from './endpoint.ts';
import { messagesEndpoint } from './messages.ts';

export const endpoints: readonly EndpointDefinition[] = [chatCompletionsEndpoint, messagesEndpoint, completionsEndpoint, modelsEndpoint, usageEndpoint, budgetEndpoint, ...proxyEndpoints];

/** The route names pipelines.yaml may list (the passthrough's several methods share `/proxy`). */
export const endpointPaths = (): string[] => [...new Set(endpoints.map((e) => e.path))];
