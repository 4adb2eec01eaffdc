/**
 * semantic-cache: answers chat-style requests (chat completions, Messages, legacy completions) from earlier
 * answers. An exact hit is the same request (key.ts: tenant, endpoint, model after routing, every parameter that
 * can change the answer), kept in the KV; a semantic hit is a conversation whose embedding (embeddingModel) is at
 * least `threshold` similar to a stored one of the same tenant, model, parameters and instructions, kept in the
 * plugin's table (migrations/). Streamed answers are stored and replayed as streams, and either serves the other
 * way too (answer.ts). Headers: X-Cache (hit | semantic-hit | miss), X-Cache-Similarity. A hit sets
 * gw.servedFromCache: usage records it at cost 0 and budgets charge nothing. See docs/semantic-cache.md.
 */
import { fileURLToPath } from 'node:url';
import { definePlugin } from '../../core/pipeline/plugin.ts';
import { checkEntries, configSchema, type SemanticCacheConfig } from './config.ts';
import { cacheMiddleware } from './middleware.ts';
import { CacheShared } from './shared.ts';

export type { SemanticCacheConfig };

export default definePlugin<SemanticCacheConfig, CacheShared>({
  name: 'semantic-cache',
  description: 'Serves chat-style requests from earlier answers: exact hits (same request, same tenant) from the KV, semantic hits (a similar conversation by embedding) from the database; streams are stored and replayed as streams.',
  configSchema,
  // Entries are per tenant: the caller's tenant is part of every key.
  requires: ['caller'],
  migrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  init: (services) => new CacheShared(services),
  checkEntries,
  setup(config, services, shared) {
    // A config built in code skips the loader's checkEntries: an unknown model still fails the start here.
    const model = config.embeddingModel;
    if (model !== undefined && !services.config.models.some((m) => m.id === model)) {
      throw new Error(`plugin "semantic-cache": embeddingModel "${model}" is not a model in \`models\``);
    }
    return cacheMiddleware(config, shared);
  },
});

/** The plugin's shared state in a gateway (tests wait for its writes with idle()). */
export function semanticCacheOf(gateway: { pluginState(name: string): unknown }): CacheShared | undefined {
  return gateway.pluginState('semantic-cache') as CacheShared | undefined;
}
