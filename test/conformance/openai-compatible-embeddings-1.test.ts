/**
 * The embeddings fixtures on the OpenAI-compatible catalogue, part 1 of 3 (split so that each file, one gateway
 * boot per provider, stays well inside the per-file test timeout).
 */
import { COMPATIBLE_EMBEDDINGS_SLUGS, compatibleModalityTarget } from './compatible-targets.ts';
import { runModalityConformance } from './modalities.ts';

for (const slug of COMPATIBLE_EMBEDDINGS_SLUGS.filter((_, i) => i % 3 === 0)) runModalityConformance(compatibleModalityTarget(slug));
