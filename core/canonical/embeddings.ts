/**
 * The canonical embeddings request and answer: the OpenAI wire shape of POST /v1/embeddings, which every
 * embeddings translator maps to and from. Vectors may come back from a provider as floats or as base64; the
 * gateway converts them to what the caller asked for (encoding_format), whichever the provider returned.
 */
import type { Usage } from './chat.ts';

export type EncodingFormat = 'float' | 'base64';

export interface EmbeddingsRequest {
  model: string;
  /** One text, or a batch whose answers keep their positions (`index`). */
  input: string | string[];
  /** Shorter vectors, for models that support reduction. */
  dimensions?: number;
  encoding_format?: EncodingFormat;
  user?: string;
}

/** A vector as a translator returns it: floats, or base64 of little-endian float32 values. */
export type Vector = number[] | string;

export interface EmbeddingsResult {
  object: 'list';
  data: Array<{ object: 'embedding'; embedding: Vector; index: number }>;
  model: string;
  /** Embeddings have no completion: completion_tokens is 0. */
  usage?: Usage;
}

export interface CanonicalEmbeddingsRequest {
  modality: 'embeddings';
  model: string;
  stream: false;
  body: EmbeddingsRequest;
}

/** The inputs of a request as a list, in order. */
export const embeddingInputs = (request: EmbeddingsRequest): string[] => (typeof request.input === 'string' ? [request.input] : request.input);

/** Float vector -> base64 of its little-endian float32 values (OpenAI's encoding_format: base64). */
export function vectorToBase64(vector: readonly number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString('base64');
}

/** base64 of little-endian float32 values -> floats; null when the text is not such a vector. */
export function base64ToVector(text: string): number[] | null {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length % 4 !== 0 || bytes.toString('base64').replace(/=+$/, '') !== text.replace(/=+$/, '')) return null;
  const vector = new Array<number>(bytes.length / 4);
  for (let i = 0; i < vector.length; i++) vector[i] = bytes.readFloatLE(i * 4);
  return vector;
}
