/** The validated configuration, with defaults applied. The JSON schema in schema.ts is its source of truth. */
export interface ServerConfig {
  port: number;
  host: string;
  shutdownTimeoutMs: number;
  accessLog: boolean;
  trustProxy: boolean;
  /** Addresses and CIDR ranges of the proxies whose X-Forwarded-For entries are believed. */
  trustedProxies: string[];
  jsonBodyLimitBytes: number;
  /** Largest request body the passthrough streams upstream. */
  proxyBodyLimitBytes: number;
  /** Send the resolved client address to providers as X-Forwarded-For on passthrough requests. */
  proxyForwardClientAddress: boolean;
  pluginSetupTimeoutMs: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  idleSocketTimeoutMs: number;
  maxConnections: number;
  /** The gateway's address as callers reach it, for links it hands out; unset: the request's scheme and Host. */
  publicUrl?: string;
  metrics: MetricsConfig;
}

/** GET /metrics: loopback scrapers are served as they are, any other needs the token. */
export interface MetricsConfig {
  enabled: boolean;
  token?: string;
}

export interface StorageConfig {
  dataDir: string;
  databaseUrl?: string;
  redisUrl?: string;
  /** Prepended to every KV key; absent: "aigw:". */
  kvPrefix?: string;
  /** Deadline of every KV call (core/store/deadline.ts). */
  kvTimeoutMs: number;
  /** Deadline of every database call made while serving; a transaction is one call. */
  databaseTimeoutMs: number;
}

export interface JwtConfig {
  /** Absent: JWT authentication is off. */
  secret?: string;
  capabilities: string[];
  clockToleranceSeconds: number;
}

export interface AuthConfig {
  adminToken?: string;
  keyCacheTtlMs: number;
  lastUsedFlushIntervalMs: number;
  jwt: JwtConfig;
}

export interface BreakerConfig {
  errorThresholdPercentage: number;
  volumeThreshold: number;
  rollingCountTimeoutMs: number;
  resetTimeoutMs: number;
}

export interface UpstreamConfig {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  keepAliveTimeoutMs: number;
  connectionsPerOrigin: number;
  queueTimeoutMs: number;
  maxFrameBytes: number;
  maxBodyBytes: number;
  breaker: BreakerConfig;
}

export interface RoutingConfig {
  retries: number;
  backoffMs: number;
  maxBackoffMs: number;
}

export interface JobsConfig {
  pollIntervalMs: number;
  leaseMs: number;
  concurrency: number;
}

/** The file registry's expiry sweep (the files.expire job, core/api/files-expiry.ts). */
export interface FilesConfig {
  /** How often the sweep runs. */
  expirySweepMs: number;
  /** Expired entries read per query. */
  expiryBatchSize: number;
}

/** Gateway-owned vector stores (core/api/vector-stores*.ts). */
export interface VectorStoresConfig {
  /** The default embedding model of a store; absent: create requests must name one. */
  embeddingModel?: string;
  maxFileBytes: number;
  chunkTokens: number;
  chunkOverlapTokens: number;
  /** Runs of one file's ingestion before it is marked failed (transient failures only). */
  maxAttempts: number;
  expirySweepMs: number;
}

/** Rules for every URL the gateway calls on a caller's behalf (webhooks; core/outbound/). */
export interface OutboundConfig {
  /** Permit http:// as well as https://. */
  allowHttp: boolean;
  /** Addresses, CIDR ranges and host names that may be reached even though private, loopback or link-local. */
  allowedAddresses: string[];
}

/** Batch completion webhook delivery (core/webhooks/). */
export interface WebhooksConfig {
  /** Deadline of one delivery attempt, from resolving the host to the end of the answer. */
  timeoutMs: number;
  /** Deliveries in all: the first plus the retries. */
  maxAttempts: number;
  /** Delay before the first retry; it doubles for each further one, with jitter. */
  backoffMs: number;
}

/** Batches (core/api/batches*.ts): status polls per provider family, in ms; `default` for the families not named. */
export interface BatchesConfig {
  pollIntervalMs: { openai: number; anthropic: number; default: number; [family: string]: number };
}

/** Video generation jobs (core/api/video-poll.ts): the status poll cadence and how long a job may run. */
export interface VideoConfig {
  pollIntervalMs: number;
  maxJobMinutes: number;
}

/** Realtime sessions (core/realtime/): the deployment-wide cap and the relay's bounds. */
export interface RealtimeConfig {
  maxConcurrentSessions: number;
  upstreamConnectTimeoutMs: number;
  maxBufferedBytes: number;
  maxFrameBytes: number;
  slotLeaseMs: number;
}

export interface ProviderConfig {
  baseUrl?: string;
  apiKey?: string;
  headers?: Record<string, string>;
  /** Provider-specific settings, validated by the provider's own schema. */
  options?: Record<string, unknown>;
  enabled: boolean;
}

export interface ModelTarget {
  provider: string;
  upstreamModel?: string;
  weight?: number;
}

export interface ModelConfig {
  id: string;
  provider?: string;
  upstreamModel?: string;
  targets?: ModelTarget[];
  strategy: 'single' | 'fallback' | 'loadbalance';
  capabilities?: string[];
  context_window?: number;
  max_output_tokens?: number | null;
  /**
   * USD per million tokens (input, output, cachedInput), USD per rerank search unit (searchUnit) and USD per
   * second of audio heard (audioSecond), USD per million characters of text spoken (characters), USD per image
   * (image: one price, or prices by size and quality) and USD per second of video made (videoSecond).
   */
  pricing?: {
    input?: number; output?: number; cachedInput?: number; searchUnit?: number; audioSecond?: number; characters?: number;
    image?: number | Record<string, number>; videoSecond?: number;
  };
  enabled: boolean;
}

export interface PluginEntry {
  name: string;
  config: Record<string, unknown>;
}

/** The pipeline that serves every route no other pipeline names. */
export const DEFAULT_PIPELINE = 'default';

export interface PipelineConfig {
  name: string;
  routes: string[];
  plugins: PluginEntry[];
}

export interface GatewayConfig {
  /** Where the configuration came from: relative plugin and provider paths resolve against `dir`. */
  source: { file: string; dir: string };
  server: ServerConfig;
  storage: StorageConfig;
  auth: AuthConfig;
  upstream: UpstreamConfig;
  routing: RoutingConfig;
  jobs: JobsConfig;
  files: FilesConfig;
  vectorStores: VectorStoresConfig;
  outbound: OutboundConfig;
  webhooks: WebhooksConfig;
  batches: BatchesConfig;
  video: VideoConfig;
  realtime: RealtimeConfig;
  providers: Record<string, ProviderConfig>;
  models: ModelConfig[];
  pipelines: PipelineConfig[];
  plugins: string[];
  providerPackages: string[];
}
