/** The capability scopes of the spec's table; `proxy` gates the provider passthrough. */
export const CAPABILITIES = [
  'chat', 'completions', 'embeddings', 'audio', 'tts', 'images', 'rerank', 'video-generation', 'files', 'batch',
  'vector-stores', 'responses', 'realtime', 'usage:read', 'budget:read', 'proxy',
] as const;

export type Capability = (typeof CAPABILITIES)[number];
