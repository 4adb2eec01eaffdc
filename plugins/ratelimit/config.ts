/** The ratelimit plugin's configuration: its JSON schema (every property described) and its type. */
import type { JsonSchema } from '../../core/json-schema.ts';
import type { RateLimits } from '../../core/identity/policy.ts';

export const LIMIT_NAMES = ['requestsPerMinute', 'requestsPerDay', 'tokensPerDay'] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/** The wire value of details.level: the address, the API key, or the deployment-wide limiter. */
export type Level = 'ip' | 'apiKey' | 'tenant';

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;
export const WINDOW_MS: Readonly<Record<LimitName, number>> = { requestsPerMinute: MINUTE_MS, requestsPerDay: DAY_MS, tokensPerDay: DAY_MS };

export interface RateLimitConfig {
  /** Deployment-wide limits, one window per tenant; organization and department policies narrow them. */
  deployment: RateLimits;
  /** Limits per client address (gw.clientIp). */
  ip: RateLimits;
  tokenEstimate: { completionTokens: number };
  onStoreError: 'open' | 'closed';
  storeTimeoutMs: number;
}

const limit = (description: string): JsonSchema => ({ type: 'integer', minimum: 1, description });

const limitsSchema = (whose: string): JsonSchema => ({
  type: 'object', additionalProperties: false, default: {},
  properties: {
    requestsPerMinute: limit(`Requests admitted per ${whose} in any sliding 60-second window.`),
    requestsPerDay: limit(`Requests admitted per ${whose} in any sliding 24-hour window.`),
    tokensPerDay: limit(`Tokens (as the provider reports them: prompt + completion for chat, the inputs for embeddings, query and documents for rerank) per ${whose} in any sliding 24-hour window; each request reserves an estimate first and settles to its real usage; work metered outside a request (a realtime session, a batch, the gateway's own embeddings) adds its tokens once.`),
  },
});

export const configSchema: JsonSchema = {
  type: 'object', additionalProperties: false,
  properties: {
    deployment: {
      ...limitsSchema('tenant'),
      description: 'Deployment-wide limits (details.level "tenant"): one window per tenant. A caller\'s organization and department policy (rateLimits) can only lower them; a policy limit applies even when the deployment sets none.',
    },
    ip: {
      ...limitsSchema('client address'),
      description: 'Limits per client address (details.level "ip"), checked first. The address is the one server.trustProxy resolves.',
    },
    tokenEstimate: {
      type: 'object', additionalProperties: false, default: {},
      description: 'How a token-limited request is reserved before the call: the prompt as the tokenizer counts it, plus the completion estimate.',
      properties: {
        completionTokens: {
          type: 'integer', minimum: 0, default: 512,
          description: 'Completion tokens reserved (per choice) when the request sets neither max_tokens nor max_completion_tokens.',
        },
      },
    },
    onStoreError: {
      type: 'string', enum: ['open', 'closed'], default: 'open',
      description: 'When the KV (Redis) fails or does not answer within storeTimeoutMs: "open" lets the request through unlimited, "closed" refuses it with 503 STORE_UNAVAILABLE.',
    },
    storeTimeoutMs: {
      type: 'integer', minimum: 1, default: 1000,
      description: 'How long one KV call may take before it counts as a store error.',
    },
  },
};
