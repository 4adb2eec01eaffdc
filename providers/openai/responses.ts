/**
 * OpenAI's Responses API (POST /responses): the gateway builds the body (core/canonical/responses-native.ts);
 * this names the model and places the request. `createOpenAiResponses` serves the family: Azure passes its path,
 * headers and deployment. An unknown previous_response_id is OpenAI's 400 `previous_response_not_found` (param
 * previous_response_id); a 404 naming it is taken the same way.
 */
import type { ResponsesTranslator } from '../../core/dispatch/provider-responses.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import type { UpstreamErrorDetails } from '../../core/dispatch/upstream-errors.ts';
import { openaiHeaders } from './chat.ts';

export interface OpenAiResponsesHooks {
  /** The request path under the base URL (default `/responses`). */
  path?(target: ProviderTarget): string;
  headers?(target: ProviderTarget): Record<string, string>;
  /** The body's `model` (default the upstream model; Azure: the deployment). */
  model?(target: ProviderTarget): string;
}

export function createOpenAiResponses(hooks: OpenAiResponsesHooks = {}): ResponsesTranslator {
  return {
    toUpstream(body, target, stream) {
      const upstream: Record<string, unknown> = { model: hooks.model?.(target) ?? target.upstreamModel, ...body };
      if (stream) upstream.stream = true;
      return { method: 'POST', path: hooks.path?.(target) ?? '/responses', headers: hooks.headers?.(target) ?? openaiHeaders(target), body: JSON.stringify(upstream) };
    },
    streamFormat: 'sse',
    forgotPrevious(error) {
      const details = error.details as UpstreamErrorDetails | null;
      const status = details?.upstreamStatus;
      if (status !== 400 && status !== 404) return false;
      const upstream = details?.upstreamError as { code?: unknown; param?: unknown } | undefined;
      return upstream?.code === 'previous_response_not_found' || upstream?.param === 'previous_response_id';
    },
  };
}

export const openaiResponses: ResponsesTranslator = createOpenAiResponses();
