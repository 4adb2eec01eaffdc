/**
 * Amazon Bedrock, chat through the Converse API (one request shape for every model on Bedrock). Requests
 * are SigV4-signed with the configured AWS credentials, or carry a Bedrock API key as a bearer token.
 */
import { defineProvider, type ChatTranslator, type ProviderTarget, type UpstreamRequest } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { bedrockEmbeddingOptions, bedrockEmbeddings } from './embeddings.ts';
import { bedrockHttpError } from './errors.ts';
import { bedrockRerank } from './rerank.ts';
import { toConverse } from './request.ts';
import { fromConverse } from './response.ts';
import { signRequest, uriEncode } from './sigv4.ts';
import { converseStreamDecoder } from './stream.ts';

interface BedrockOptions {
  region?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
}

const chat: ChatTranslator = {
  toUpstream(request, target, stream) {
    // Model ids hold ':' and inference-profile ARNs '/': one path segment, percent-encoded.
    const path = `/model/${uriEncode(target.upstreamModel)}/${stream ? 'converse-stream' : 'converse'}`;
    const headers = {
      'content-type': 'application/json',
      accept: stream ? 'application/vnd.amazon.eventstream' : 'application/json',
      ...target.headers,
    };
    return { method: 'POST', path, headers, body: JSON.stringify(toConverse(request, target)) };
  },
  fromUpstream: fromConverse,
  streamFormat: 'aws-eventstream',
  streamDecoder: converseStreamDecoder,
};

/** The URL the upstream client will send to (base path + request path), which is what gets signed. */
function sentUrl(baseUrl: string, path: string): string {
  if (/^https?:\/\//i.test(path)) return path;
  const base = new URL(baseUrl);
  return `${base.origin}${base.pathname.replace(/\/+$/, '')}${base.search}${path}`;
}

function authorize(request: UpstreamRequest, target: ProviderTarget, now: number): UpstreamRequest {
  if (target.apiKey) return { ...request, headers: { ...request.headers, authorization: `Bearer ${target.apiKey}` } };
  const { accessKeyId, secretAccessKey, sessionToken, ...options } = target.options as BedrockOptions;
  if (!accessKeyId || !secretAccessKey) {
    throw new GatewayError('UPSTREAM_ERROR', `${target.slug} has no credential: set apiKey (a Bedrock API key) or options.accessKeyId and options.secretAccessKey`, { provider: target.slug });
  }
  // A baseUrl on AWS names its region; a proxy or a VPC endpoint may not, and then options.region must.
  const region = options.region || /^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com/.exec(new URL(target.baseUrl).hostname)?.[1];
  if (!region) throw new GatewayError('UPSTREAM_ERROR', `${target.slug} cannot sign for an unknown region: set options.region`, { provider: target.slug });
  const headers = signRequest({
    method: request.method,
    url: sentUrl(target.baseUrl, request.path),
    headers: request.headers,
    ...(request.body === undefined ? {} : { body: request.body }),
    // A passthrough body streams past unread: hashing it would mean holding it. Signed as UNSIGNED-PAYLOAD.
    ...(request.bodyStreamed ? { unsignedPayload: true } : {}),
    region,
    service: 'bedrock',
    credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) },
    now,
  });
  return { ...request, headers };
}

const credential = (what: string) => ({ type: 'string', description: `${what} Ignored when the provider block sets apiKey.` });

export default defineProvider({
  slug: 'bedrock',
  family: 'bedrock',
  displayName: 'Amazon Bedrock',
  defaultBaseUrl: 'https://bedrock-runtime.{region}.amazonaws.com',
  configSchema: {
    type: 'object', additionalProperties: false,
    description: 'Amazon Bedrock options. Authentication: apiKey (a Bedrock API key, sent as a bearer token), or else AWS credentials that sign every request with SigV4.',
    properties: {
      region: { type: 'string', pattern: '^[a-z]{2}(-[a-z]+)+-\\d+$', description: 'AWS region, e.g. us-east-1: fills the default base URL https://bedrock-runtime.{region}.amazonaws.com and scopes the SigV4 signature (required unless baseUrl is an AWS bedrock-runtime host, which names it).' },
      accessKeyId: credential('AWS access key id for SigV4, e.g. ${AWS_ACCESS_KEY_ID}.'),
      secretAccessKey: credential('AWS secret access key for SigV4, e.g. ${AWS_SECRET_ACCESS_KEY}.'),
      sessionToken: credential('Session token of temporary AWS credentials, e.g. ${AWS_SESSION_TOKEN:-}; sent as X-Amz-Security-Token and signed. Empty means none.'),
      additionalModelRequestFields: {
        type: 'object',
        description: "Model-specific fields merged into every request's additionalModelRequestFields (e.g. {top_k: 50} for Claude); reasoning fields derived from the request take precedence.",
      },
      ...bedrockEmbeddingOptions,
    },
    dependencies: { accessKeyId: ['secretAccessKey'], secretAccessKey: ['accessKeyId'] },
  },
  capabilities: {
    chat: { stream: true, tools: true, vision: true, n: false },
    // InvokeModel with Titan Text Embeddings (one input a call) and Cohere Embed (up to 96).
    embeddings: {},
    // InvokeModel with Cohere Rerank and Amazon Rerank (up to 1,000 documents).
    rerank: {},
  },
  chat,
  embeddings: bedrockEmbeddings,
  rerank: bedrockRerank,
  authorize: async (request, target, io) => authorize(request, target, io.now()),
  mapError: (status, body, target, headers) => bedrockHttpError(target, status, body, headers),
});
