/**
 * A deterministic stand-in for an embedding model, for the OpenAI fake's POST /embeddings: a bag of words hashed
 * into DIMENSIONS buckets. Words are lower-cased runs of letters and digits, a few function words are dropped and
 * a trailing plural "s" is cut, so that paraphrases using the same content words get similar vectors:
 * "What is the capital city of France?" and "Which city is the capital of France?" embed identically, adding
 * "please tell me" lowers the cosine to about 0.87, and "... of Germany?" to about 0.67.
 */
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';

export const DIMENSIONS = 64;

const STOP_WORDS = new Set(['a', 'an', 'the', 'is', 'are', 'of', 'what', 'which', 'please', 'me', 'to', 'in', 'and', 'user', 'assistant']);

export function words(text: string): string[] {
  return (text.toLowerCase().match(/[a-z0-9]+/g) ?? [])
    .filter((word) => !STOP_WORDS.has(word))
    .map((word) => (word.length > 3 && word.endsWith('s') ? word.slice(0, -1) : word));
}

/** The word counts in hashed buckets; not normalized (the gateway must normalize what providers give). */
export function bagOfWords(text: string): number[] {
  const vector = new Array<number>(DIMENSIONS).fill(0);
  for (const word of words(text)) {
    const bucket = createHash('sha256').update(word).digest().readUInt32BE(0) % DIMENSIONS;
    vector[bucket]! += 1;
  }
  return vector;
}

/** The cosine of two texts' vectors, as the gateway should compute it. */
export function cosineOf(a: string, b: string): number {
  const x = bagOfWords(a);
  const y = bagOfWords(b);
  const dot = x.reduce((sum, v, i) => sum + v * y[i]!, 0);
  const norm = (v: number[]) => Math.sqrt(v.reduce((sum, n) => sum + n * n, 0));
  return dot / (norm(x) * norm(y));
}

/** Answers an OpenAI embeddings request body. */
export function answerEmbeddings(res: ServerResponse, body: Record<string, unknown>): void {
  const inputs = typeof body.input === 'string' ? [body.input] : (body.input as string[]);
  const data = inputs.map((text, index) => ({ object: 'embedding', index, embedding: bagOfWords(text) }));
  const tokens = inputs.reduce((sum, text) => sum + words(text).length, 0);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ object: 'list', data, model: String(body.model), usage: { prompt_tokens: tokens, total_tokens: tokens } }));
}
