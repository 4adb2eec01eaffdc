/**
 * The catalogue's embeddings: every entry that declares `embeddings` gets the OpenAI embeddings translator
 * (providers/openai/embeddings.ts) with its documented differences as data (which models take `dimensions`,
 * whether base64 is offered) and, where a field is named or required otherwise, a small body hook.
 */
import type { EmbeddingsRequest } from '../../core/canonical/embeddings.ts';
import type { EmbeddingsTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { createOpenAiEmbeddings } from '../openai/embeddings.ts';

export type EmbeddingsBodyHook = (body: Record<string, unknown>, request: EmbeddingsRequest, target: ProviderTarget) => void;

export interface CompatibleEmbeddings {
  /** The upstream models that return shorter vectors on `dimensions` (absent: none; `dimensions` is refused). */
  dimensions?: RegExp;
  /** False when the server documents floats only: floats are asked for and the gateway encodes base64. */
  base64?: boolean;
  body?: EmbeddingsBodyHook;
}

/** Mistral rejects unknown fields: `dimensions` is its `output_dimension`, and it has no `user`. */
export const mistralEmbeddingsBody: EmbeddingsBodyHook = (body) => {
  if (body.dimensions !== undefined) body.output_dimension = body.dimensions;
  delete body.dimensions;
  delete body.user;
};

/**
 * NVIDIA's retrieval models are asymmetric and require `input_type` (query or passage); the gateway sends the
 * provider option `embeddingInputType` (default query, NIM's own default) and `truncate: NONE`, so that an input
 * past the model's window is refused rather than cut silently.
 */
export const nimEmbeddingsBody: EmbeddingsBodyHook = (body, _request, target) => {
  const { embeddingInputType } = target.options as { embeddingInputType?: string };
  body.input_type = embeddingInputType ?? 'query';
  body.truncate = 'NONE';
};

/** `headers` are the entry's, as its chat sends them (providers/openai-compatible/index.ts). */
export function compatibleEmbeddings(spec: CompatibleEmbeddings, headers: (target: ProviderTarget) => Record<string, string>): EmbeddingsTranslator {
  const dimensions = spec.dimensions;
  return createOpenAiEmbeddings({
    headers,
    base64: spec.base64 ?? true,
    supportsDimensions: (model) => dimensions?.test(model) ?? false,
    ...(spec.body ? { body: spec.body } : {}),
  });
}
