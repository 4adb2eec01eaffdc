/**
 * The one JSON schema that validates pipelines.yaml. It is assembled at load time from the base sections
 * below plus every registered plugin's and provider's own configSchema, so that a plugin entry or a
 * provider block is checked by the schema its author wrote.
 */
import { CAPABILITIES, SPEC_CAPABILITIES } from './capabilities.ts';

import type { JsonSchema } from '../json-schema.ts';

export type { JsonSchema };

export interface SchemaContributor {
  name: string;
  configSchema: JsonSchema;
}

/** Marks the schema of a name that must come from a registry, so errors can list the known names. */
export const ENTITY_KEYWORD = 'x-entity';

const positiveMs = (description: string, dflt: number): JsonSchema => ({
  type: 'integer', minimum: 1, default: dflt, description,
});

const serverSchema: JsonSchema = {
  type: 'object', additionalProperties: false, default: {},
  description: 'The HTTP listener.',
  properties: {
    port: { type: 'integer', minimum: 0, maximum: 65535, default: 8080, description: 'TCP port to listen on (0 picks a free one).' },
    host: { type: 'string', minLength: 1, default: '0.0.0.0', description: 'Address to bind.' },
    shutdownTimeoutMs: positiveMs('On SIGTERM/SIGINT, how long in-flight requests and streams may run before connections are closed.', 30000),
    accessLog: { type: 'boolean', default: true, description: 'Log one line per request (method, route, status, duration).' },
    trustProxy: { type: 'boolean', default: false, description: 'Take the client address from X-Forwarded-For: the rightmost hop that is not a trusted proxy, instead of the socket peer.' },
    trustedProxies: {
      type: 'array', items: { type: 'string', description: 'An IPv4 or IPv6 address, or a CIDR range.' },
      default: ['127.0.0.0/8', '::1/128', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
      description: 'With trustProxy: the proxies whose X-Forwarded-For entries are believed (default: loopback and private ranges).',
    },
    pluginSetupTimeoutMs: positiveMs('A plugin whose setup takes longer fails the boot, naming the plugin.', 10000),
    jsonBodyLimitBytes: { type: 'integer', minimum: 1024, default: 10485760, description: 'Largest JSON request body on routes that have no limit of their own; larger bodies get 413 before they are read in full.' },
    headersTimeoutMs: positiveMs('How long a client has to send a complete request line and headers, from connecting or from the first byte of a later request on a kept-alive connection; a silent or half-sent request gets 408 and its connection is closed. At most requestTimeoutMs.', 10000),
    requestTimeoutMs: positiveMs('How long a client has to send a whole request, body included (408 after it). Answers, streams included, are not bounded by it.', 300000),
    idleSocketTimeoutMs: positiveMs('A connection on which no byte moves either way for this long is closed, whatever it is doing: a client that stopped reading a stream, a stalled upload. Keep it above upstream.bodyTimeoutMs and upstream.headersTimeoutMs so that a slow upstream is answered with its own error first.', 360000),
    maxConnections: { type: 'integer', minimum: 1, default: 8192, description: 'Most open client connections. Past it, the connection that has waited longest without a request in progress is closed to admit the new one; when every connection is busy the new one is refused. Both are counted (/readyz `connections`) and logged. Keep it under the process file-descriptor limit minus the upstream pool.' },
    proxyForwardClientAddress: { type: 'boolean', default: false, description: 'Send the caller\'s address to providers on passthrough requests (/proxy/<provider>/..., WebSocket upgrades too) as X-Forwarded-For: the resolved client address, the trusted proxies after it, then the gateway\'s socket peer. Off by default: a provider is a third party, the address is personal data it needs for nothing it does for the gateway, and translated calls never send it. Turn it on for upstreams you operate that log or limit by client. X-Forwarded-Proto and X-Forwarded-Host are sent either way; a caller\'s own forwarding headers never are, unless it is a trusted proxy.' },
    publicUrl: { type: 'string', pattern: '^https?://[^/?#]+(/[^?#]*)?$', description: 'The gateway\'s address as callers reach it (https://gw.example.com, a path prefix allowed): links the gateway hands out (a video job\'s content route) are built on it. Unset: the request\'s own scheme and Host.' },
    proxyBodyLimitBytes: { type: 'integer', minimum: 1024, default: 52428800, description: 'Largest request body the passthrough (/proxy/<provider>/...) streams to a provider; a declared Content-Length over it gets 413 before any byte is sent upstream, a chunked body as soon as it crosses it.' },
    metrics: {
      type: 'object', additionalProperties: false, default: {},
      description: 'The Prometheus endpoint GET /metrics (docs/operations.md lists its series).',
      properties: {
        enabled: { type: 'boolean', default: true, description: 'Serve GET /metrics. Off: the route answers 404 and nothing is collected.' },
        token: { type: 'string', minLength: 16, description: 'Bearer token a scraper from a non-loopback address must send (Authorization: Bearer <token>), e.g. ${AIGW_METRICS_TOKEN}. Loopback scrapers (the socket peer, never X-Forwarded-For) need none. Unset: only loopback scrapers are served; others get 403.' },
      },
    },
  },
};

const storageSchema: JsonSchema = {
  type: 'object', additionalProperties: false, default: {},
  description: 'Where state lives. Without databaseUrl the embedded PGlite database is used; without redisUrl an in-process KV.',
  properties: {
    dataDir: { type: 'string', minLength: 1, description: 'Folder of the embedded database (default: $AIGW_DATA_DIR or ./data).' },
    databaseUrl: { type: 'string', description: 'Postgres connection string (default: $DATABASE_URL). Empty means embedded.' },
    redisUrl: { type: 'string', description: 'Redis connection string (default: $REDIS_URL). Empty means in-process memory.' },
    kvPrefix: { type: 'string', minLength: 1, maxLength: 100, description: 'Prepended to every KV key (default "aigw:"), so that deployments or test runs sharing one Redis never collide.' },
    kvTimeoutMs: {
      type: 'integer', minimum: 1, maximum: 60000, default: 500,
      description: 'Deadline of every KV call. A call past it fails as a store error (authentication falls back to the database; ratelimit and budget apply their onStoreError); when nothing has answered for a whole deadline the KV counts as stalled and calls fail at once, one probing it per deadline, until it answers.',
    },
    databaseTimeoutMs: {
      type: 'integer', minimum: 1, maximum: 600000, default: 5000,
      description: 'Deadline of every database call made while serving (a transaction counts as one call; migrations at start are not bounded). Past it the request gets 503 STORE_UNAVAILABLE; stalls are handled as for the KV. A write that timed out may still be saved once the database answers.',
    },
  },
};

const authSchema: JsonSchema = {
  type: 'object', additionalProperties: false, default: {},
  description: 'Credentials and the admin API.',
  properties: {
    adminToken: { type: 'string', description: 'Bearer token of the admin API at /admin/v1 (default: $AIGW_ADMIN_TOKEN). Unset turns the admin API off.' },
    keyCacheTtlMs: positiveMs('How long a resolved API key, organization or department stays in the KV cache; revocation and policy writes delete the entry at once.', 60000),
    lastUsedFlushIntervalMs: positiveMs('How often the keys\' last-used times are written to the database (in one statement), instead of once per request.', 15000),
    jwt: {
      type: 'object', additionalProperties: false, default: {},
      description: 'Session JWTs (HS256). Without a secret, JWT authentication is off.',
      properties: {
        secret: { type: 'string', description: 'HS256 secret, at least 32 characters (default: $AIGW_JWT_SECRET). Empty turns JWT authentication off.' },
        capabilities: {
          type: 'array', items: { type: 'string', enum: [...CAPABILITIES] }, uniqueItems: true, default: [...SPEC_CAPABILITIES],
          description: 'What JWT callers may call (default: the 15 capabilities of the spec; the gateway\'s extension `proxy` only when listed).',
        },
        clockToleranceSeconds: { type: 'integer', minimum: 0, maximum: 60, default: 0, description: 'Leeway for exp and nbf against clock skew.' },
      },
    },
  },
};

const upstreamSchema: JsonSchema = {
  type: 'object', additionalProperties: false, default: {},
  description: 'How the gateway talks to providers: connection pools, timeouts and circuit breakers.',
  properties: {
    connectTimeoutMs: positiveMs('TCP + TLS connect timeout.', 10000),
    headersTimeoutMs: positiveMs('Longest wait for the response headers once the request is sent (time to first byte).', 300000),
    bodyTimeoutMs: positiveMs('Longest silence between two chunks of a response body.', 300000),
    keepAliveTimeoutMs: positiveMs('How long an idle upstream connection is kept for reuse.', 60000),
    connectionsPerOrigin: { type: 'integer', minimum: 1, maximum: 65536, default: 128, description: 'Connection pool size per upstream origin: at most this many requests to one origin are in flight at once; the others wait in a queue.' },
    queueTimeoutMs: { type: 'integer', minimum: 0, maximum: 600000, default: 5000, description: 'Longest wait for a free connection when the origin\'s pool is full; past it the request gets 503 UPSTREAM_UNAVAILABLE. 0 refuses at once.' },
    maxFrameBytes: { type: 'integer', minimum: 1024, maximum: 268435456, default: 8388608, description: 'Largest single event of an upstream stream (an SSE line or event, a JSON line, an AWS event-stream message); a larger one fails the call as UPSTREAM_ERROR and drops the connection. Also the most a stream may send after its terminator: its connection is reused, or dropped past that.' },
    maxBodyBytes: { type: 'integer', minimum: 1024, maximum: 536870912, default: 33554432, description: 'Largest non-streamed upstream answer (a JSON body) the gateway reads; a larger one fails the call as UPSTREAM_ERROR and drops the connection.' },
    breaker: {
      type: 'object', additionalProperties: false, default: {},
      description: 'One circuit breaker per upstream (provider + base URL). Caller errors (4xx other than 408 and 429) never count.',
      properties: {
        errorThresholdPercentage: { type: 'number', exclusiveMinimum: 0, maximum: 100, default: 50, description: 'Failure percentage over the rolling window that opens the breaker.' },
        volumeThreshold: { type: 'integer', minimum: 1, default: 5, description: 'Requests in the window before the breaker may open.' },
        rollingCountTimeoutMs: positiveMs('Length of the rolling statistics window.', 10000),
        resetTimeoutMs: positiveMs('How long an open breaker waits before letting one probe through (half-open).', 30000),
      },
    },
  },
};

const routingSchema: JsonSchema = {
  type: 'object', additionalProperties: false, default: {},
  description: 'How a request moves between attempts and targets when an upstream fails before answering.',
  properties: {
    retries: { type: 'integer', minimum: 0, maximum: 5, default: 1, description: 'Extra attempts on the same target after a retryable failure (5xx, timeout, 429, connection error), before the next target. Never after the first byte reached the caller.' },
    backoffMs: positiveMs('Base delay before a retry; each retry doubles it, with full jitter.', 100),
    maxBackoffMs: positiveMs('Cap on one retry delay.', 2000),
  },
};

const jobsSchema: JsonSchema = {
  type: 'object', additionalProperties: false, default: {},
  description: 'The background job runner (batch polling, webhook delivery): jobs live in the database and each is run by one instance at a time, under a lease.',
  properties: {
    pollIntervalMs: positiveMs('How often each instance looks for due jobs (an enqueue due now is picked up at once by the instance that made it).', 1000),
    leaseMs: { type: 'integer', minimum: 10, default: 60000, description: 'How long a claimed job belongs to its instance. A run is renewed every leaseMs / 2; a job whose instance died (kill -9, lost host) is claimed by another once its lease has passed.' },
    concurrency: { type: 'integer', minimum: 1, maximum: 1000, default: 4, description: 'Most jobs one instance runs at once.' },
  },
};

const filesSchema: JsonSchema = {
  type: 'object', additionalProperties: false, default: {},
  description: 'The file registry (/v1/files): the sweep that deletes expired entries and their provider files.',
  properties: {
    expirySweepMs: positiveMs('How often the files.expire job runs: each run deletes every entry past its expires_at and its provider file (one job for the whole deployment, whichever instance runs it).', 600000),
    expiryBatchSize: { type: 'integer', minimum: 1, maximum: 1000, default: 100, description: 'Expired entries read per query of a sweep; a sweep reads batches until none is left.' },
  },
};

const vectorStoresSchema: JsonSchema = {
  type: 'object', additionalProperties: false, default: {},
  description: 'Gateway-owned vector stores (/v1/vector_stores): the default embedding model, how files are read and chunked, and the expiry sweep.',
  properties: {
    embeddingModel: { type: 'string', minLength: 1, description: 'The model (an id under models, served by a provider with embeddings) a store is embedded with when its create request names none. Without it, create requests must name embedding_model.' },
    maxFileBytes: { type: 'integer', minimum: 1, maximum: 536870912, default: 52428800, description: 'Largest file downloaded for ingestion (bytes); a larger file is skipped with a warning.' },
    chunkTokens: { type: 'integer', minimum: 50, maximum: 8000, default: 800, description: 'Most tokens per chunk (o200k_base tokenizer).' },
    chunkOverlapTokens: { type: 'integer', minimum: 0, maximum: 4000, default: 200, description: 'Tokens a chunk repeats from the end of the one before it; at most half of chunkTokens.' },
    maxAttempts: { type: 'integer', minimum: 1, maximum: 100, default: 5, description: 'Runs of one file\'s ingestion before it is marked failed, when the provider or the embeddings fail in a way that may pass (5xx, timeout, open breaker).' },
    expirySweepMs: positiveMs('How often the vector-stores.expire job deletes stores and chunks past their expires_at.', 60000),
  },
};

const outboundSchema: JsonSchema = {
  type: 'object', additionalProperties: false, default: {},
  description: 'Rules for every URL the gateway calls on a caller\'s behalf (batch completion webhooks). Private (RFC 1918, fc00::/7), loopback, link-local (169.254.0.0/16, fe80::/10), unspecified, multicast, carrier-grade NAT (100.64.0.0/10) and reserved addresses are refused, IPv4-mapped, NAT64 and 6to4 forms included, unless allow-listed here.',
  properties: {
    allowHttp: { type: 'boolean', default: false, description: 'Permit http:// URLs as well as https://. Off by default: a webhook body and its signature would travel in clear text.' },
    allowedAddresses: {
      type: 'array', default: [],
      items: { type: 'string', minLength: 1, description: 'An IPv4 or IPv6 address, a CIDR range, or a host name.' },
      description: 'Destinations reachable even though their address is not public: an address or CIDR range permits those addresses whatever name led to them; a host name permits that exact host whatever it resolves to. Empty by default.',
    },
  },
};

const webhooksSchema: JsonSchema = {
  type: 'object', additionalProperties: false, default: {},
  description: 'Delivery of batch completion webhooks: signed POSTs retried with exponential backoff; the URLs obey `outbound`.',
  properties: {
    timeoutMs: { type: 'integer', minimum: 1, maximum: 120000, default: 10000, description: 'Deadline of one delivery attempt, from resolving the host to the end of the answer; an attempt past it is retried.' },
    maxAttempts: { type: 'integer', minimum: 1, maximum: 20, default: 6, description: 'Deliveries in all, the first included (6: the first plus up to 5 retries). After the last failed one the delivery is failed and kept for inspection.' },
    backoffMs: positiveMs('Delay before the first retry; each further retry doubles it, with jitter (half fixed, half random).', 30000),
  },
};

const batchesSchema: JsonSchema = {
  type: 'object', additionalProperties: false, default: {},
  description: 'Batches submitted through /v1/batches: how often the gateway asks the provider for their status.',
  properties: {
    pollIntervalMs: {
      type: 'object', default: {},
      description: 'Delay between two status polls of one batch, per provider family (the provider\'s `family`); `default` is every other family.',
      properties: {
        openai: positiveMs('OpenAI\'s Batch API.', 30000),
        anthropic: positiveMs('Anthropic\'s Message Batches API.', 30000),
        default: positiveMs('Every other provider family.', 60000),
      },
      additionalProperties: { type: 'integer', minimum: 1, description: 'The family\'s poll interval in ms.' },
    },
  },
};

const videoSchema: JsonSchema = {
  type: 'object', additionalProperties: false, default: {},
  description: 'Video generation jobs (POST /v1/video/generations): how the gateway follows them on their provider.',
  properties: {
    pollIntervalMs: positiveMs('Delay between two status requests for one running job; the first is made at the sweep\'s next run after the job starts. A failed request is retried after twice the delay per failure in a row, up to 16 times it.', 10000),
    maxJobMinutes: { type: 'integer', minimum: 1, maximum: 10080, default: 60, description: 'A job still running this long after it started is failed with UPSTREAM_TIMEOUT (and metered as failed, with no seconds).' },
  },
};

const realtimeSchema: JsonSchema = {
  type: 'object', additionalProperties: false, default: {},
  description: 'Realtime sessions (POST /v1/realtime/sessions, the /v1/realtime/connect WebSocket): the deployment-wide cap and the relay\'s bounds.',
  properties: {
    maxConcurrentSessions: { type: 'integer', minimum: 1, default: 10, description: 'Sessions connecting (ticket issued, not yet redeemed) plus connected, across every instance (held in the KV); a creation past it gets 429 RATE_LIMIT_EXCEEDED.' },
    upstreamConnectTimeoutMs: positiveMs('How long the provider\'s realtime WebSocket may take to open; past it the client\'s socket is closed with 1011.', 10000),
    maxBufferedBytes: { type: 'integer', minimum: 65536, default: 4194304, description: 'Bytes a socket may have queued for sending before the relay stops reading from the other side until it drains (back-pressure).' },
    maxFrameBytes: { type: 'integer', minimum: 65536, default: 16777216, description: 'Largest frame accepted from either side; a larger one closes the session with 1009.' },
    slotLeaseMs: { type: 'integer', minimum: 5000, default: 60000, description: 'A connected session\'s slot is renewed every third of this; an instance that dies frees its sessions\' slots within it.' },
  },
};

const modelTargetSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['provider'],
  properties: {
    provider: { type: 'string', minLength: 1, description: 'Provider slug; must be configured under providers.' },
    upstreamModel: { type: 'string', minLength: 1, description: 'Model name sent upstream (default: the model id).' },
    weight: { type: 'number', exclusiveMinimum: 0, description: 'Share of traffic with strategy loadbalance.' },
  },
};

const modelSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['id'],
  properties: {
    id: { type: 'string', minLength: 1, description: 'The model name callers send.' },
    provider: { type: 'string', minLength: 1, description: 'Provider slug (use either provider or targets).' },
    upstreamModel: { type: 'string', minLength: 1, description: 'Model name sent upstream when it differs from id.' },
    targets: { type: 'array', minItems: 1, items: modelTargetSchema, description: 'Several provider targets, for routing strategies.' },
    strategy: { type: 'string', enum: ['single', 'fallback', 'loadbalance'], description: 'How targets are chosen (default: single for one target, fallback for several).' },
    capabilities: { type: 'array', items: { type: 'string' }, description: 'Modalities listed for the model (chat, completions, embeddings, ...).' },
    context_window: { type: 'integer', minimum: 1, description: 'Max input tokens.' },
    max_output_tokens: { type: 'integer', minimum: 1, nullable: true, description: 'Max output tokens.' },
    pricing: {
      type: 'object', additionalProperties: false,
      description: 'What requests to the model cost: USD per million tokens, and USD per search unit for rerank. A price left out counts as 0; a model with none of them is unpriced.',
      properties: {
        input: { type: 'number', minimum: 0, description: 'USD per million input tokens: the prompt of chat, the inputs of embeddings, the tokens a rerank provider reports.' },
        output: { type: 'number', minimum: 0, description: 'USD per million completion tokens (reasoning included).' },
        cachedInput: { type: 'number', minimum: 0, description: 'USD per million cached prompt tokens (default: input).' },
        searchUnit: { type: 'number', minimum: 0, description: 'USD per rerank search unit: one query with up to 100 documents (meta.billed_units.search_units).' },
        audioSecond: { type: 'number', minimum: 0, description: 'USD per second of audio heard (transcription and translation), whatever response_format the caller asked for.' },
        characters: { type: 'number', minimum: 0, description: 'USD per million characters of input spoken (POST /v1/audio/speech): the input\'s code points, billed in full once the provider answers, whatever response_format.' },
        image: {
          description: 'USD per image made (POST /v1/images/generations): one price for every image, or prices by size and quality keyed `<quality>/<size>`, `<size>`, `<quality>` or `default`, the most specific key that matches applies (an image no key matches costs 0).',
          oneOf: [
            { type: 'number', minimum: 0 },
            { type: 'object', minProperties: 1, propertyNames: { pattern: '^[A-Za-z0-9_.:x/-]{1,64}$' }, additionalProperties: { type: 'number', minimum: 0 } },
          ],
        },
        videoSecond: { type: 'number', minimum: 0, description: 'USD per second of video made (POST /v1/video/generations), billed once the job completes.' },
      },
    },
    enabled: { type: 'boolean', default: true, description: 'A disabled model is neither listed nor routed.' },
  },
};

function providerBlockSchema(provider: SchemaContributor): JsonSchema {
  return {
    type: 'object', additionalProperties: false,
    properties: {
      baseUrl: { type: 'string', pattern: '^https?://', description: "The provider's API base URL (default: the provider's public one)." },
      apiKey: { type: 'string', description: 'The credential the gateway injects upstream. Use ${ENV} references, never literals.' },
      headers: { type: 'object', additionalProperties: { type: 'string' }, description: 'Extra headers sent upstream.' },
      options: provider.configSchema,
      enabled: { type: 'boolean', default: true, description: 'A disabled provider receives no traffic.' },
    },
  };
}

function pluginEntrySchema(plugins: SchemaContributor[]): JsonSchema {
  const names = plugins.map((p) => p.name);
  return {
    if: { type: 'string' },
    then: { type: 'string', enum: names, [ENTITY_KEYWORD]: 'plugin' },
    else: {
      type: 'object', minProperties: 1, maxProperties: 1, [ENTITY_KEYWORD]: 'plugin',
      properties: Object.fromEntries(plugins.map((p) => [p.name, p.configSchema])),
      additionalProperties: false,
    },
  };
}

/**
 * `present`: the provider slugs the file configures. Only their blocks get the full schema: the blocks of all 49
 * built-in providers made the config schema three times larger and its compile, at every start, about 0.25 s
 * instead of 0.04 s. The others stay listed (with no schema, and absent from the file anyway), so an unknown
 * slug is still refused with the list of known ones.
 */
export function buildConfigSchema(plugins: SchemaContributor[], providers: SchemaContributor[], present?: ReadonlySet<string>): JsonSchema {
  return {
    type: 'object', additionalProperties: false,
    properties: {
      server: serverSchema,
      storage: storageSchema,
      auth: authSchema,
      upstream: upstreamSchema,
      routing: routingSchema,
      jobs: jobsSchema,
      files: filesSchema,
      vectorStores: vectorStoresSchema,
      outbound: outboundSchema,
      webhooks: webhooksSchema,
      batches: batchesSchema,
      video: videoSchema,
      realtime: realtimeSchema,
      providers: {
        type: 'object', default: {}, [ENTITY_KEYWORD]: 'provider',
        description: 'Provider slug -> connection settings.',
        properties: Object.fromEntries(providers.map((p) => [p.name, !present || present.has(p.name) ? providerBlockSchema(p) : {}])),
        additionalProperties: false,
      },
      models: { type: 'array', items: modelSchema, default: [], description: 'The models callers may name.' },
      pipelines: {
        type: 'array', default: [], description: 'Routes -> ordered plugins.',
        items: {
          type: 'object', additionalProperties: false, required: ['name', 'routes', 'plugins'],
          properties: {
            name: { type: 'string', pattern: '^[A-Za-z0-9_-]+$', description: 'Pipeline name; "default" serves every route no pipeline names.' },
            routes: { type: 'array', items: { type: 'string', pattern: '^/' }, description: 'Route paths served by this pipeline.' },
            plugins: { type: 'array', items: pluginEntrySchema(plugins), description: 'Plugins in order: a name, or {name: {config}}.' },
          },
        },
      },
      plugins: { type: 'array', items: { type: 'string', minLength: 1 }, default: [], description: 'Third-party plugins: npm package names or paths relative to this file.' },
      providerPackages: { type: 'array', items: { type: 'string', minLength: 1 }, default: [], description: 'Third-party provider translators: npm package names or paths relative to this file.' },
    },
  };
}

/** The part of the schema that must hold before third-party modules can be loaded. */
export const bootstrapSchema: JsonSchema = {
  type: 'object',
  properties: {
    plugins: { type: 'array', items: { type: 'string', minLength: 1 } },
    providerPackages: { type: 'array', items: { type: 'string', minLength: 1 } },
  },
};
