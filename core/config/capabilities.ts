/**
 * The capability table: which capability a key needs for which endpoints. The spec's 15 rows, then the
 * gateway's own extensions. Every endpoint declares its capability, and a test holds each declaration to this
 * table.
 */
export const SPEC_CAPABILITY_ENDPOINTS = {
  chat: ['/v1/chat/completions', '/v1/messages'],
  completions: ['/v1/completions'],
  embeddings: ['/v1/embeddings'],
  audio: ['/v1/audio/transcriptions', '/v1/audio/translations'],
  tts: ['/v1/audio/speech'],
  images: ['/v1/images/generations'],
  rerank: ['/v1/rerank'],
  'video-generation': ['/v1/video/generations'],
  files: ['/v1/files'],
  batch: ['/v1/batches'],
  'vector-stores': ['/v1/vector_stores'],
  responses: ['/v1/responses'],
  realtime: ['/v1/realtime/sessions', '/v1/realtime/connect'],
  'usage:read': ['/v1/usage'],
  'budget:read': ['/v1/budget'],
} as const;

/**
 * Beyond the spec. `proxy`: the passthrough to a provider's native API (/proxy/<provider>/...), which spends the
 * gateway's provider credential on any call the provider accepts. Keys get it only when created with it, and
 * JWT callers only when auth.jwt.capabilities lists it (it is not in that default).
 */
export const EXTENSION_CAPABILITY_ENDPOINTS = {
  proxy: ['/proxy'],
} as const;

export const CAPABILITY_ENDPOINTS = { ...SPEC_CAPABILITY_ENDPOINTS, ...EXTENSION_CAPABILITY_ENDPOINTS } as const;

export type Capability = keyof typeof CAPABILITY_ENDPOINTS;

/** Every capability a key may be given: the spec's 15, then the extensions. */
export const CAPABILITIES = Object.keys(CAPABILITY_ENDPOINTS) as Capability[];

/** The spec's 15 capabilities, in its order: what JWT callers get by default. */
export const SPEC_CAPABILITIES = Object.keys(SPEC_CAPABILITY_ENDPOINTS) as Capability[];

/**
 * Routes of the gateway's own that belong to a spec capability rather than a new one: the WebSocket on which an
 * image request's progress is followed is part of `images` (the spec names the namespace, not a capability).
 */
export const SPEC_CAPABILITY_EXTRA_PATHS: Readonly<Record<string, Capability>> = { '/image-progress': 'images' };

/** The capability the table gives a path (a path under a listed prefix counts), or null (GET /v1/models). */
export function capabilityFor(path: string): Capability | null {
  const extra = SPEC_CAPABILITY_EXTRA_PATHS[path];
  if (extra) return extra;
  for (const [capability, prefixes] of Object.entries(CAPABILITY_ENDPOINTS)) {
    if ((prefixes as readonly string[]).some((p) => path === p || path.startsWith(`${p}/`))) return capability as Capability;
  }
  return null;
}
