/**
 * The embeddings wires of Cohere, Voyage, Jina and watsonx, as fakes speak them. Cohere /v2/embed: texts,
 * input_type, embedding_types, output_dimension; answers embeddings {float: [...]} with
 * meta.billed_units.input_tokens. Voyage and Jina /embeddings: OpenAI's shape (input, data[{embedding, index}],
 * usage.total_tokens) with output_dimension / dimensions; Voyage answers base64 when asked. watsonx
 * /text/embeddings: inputs, model_id, project_id; answers results[{embedding}] with input_token_count.
 */
import assert from 'node:assert/strict';
import { vectorToBase64 } from '../../../core/canonical/embeddings.ts';
import type { RecordedUpstreamRequest } from '../kit.ts';
import type { EmbeddingsWire, WireAnswer } from '../modalities.ts';

const json = (body: unknown): WireAnswer => ({ body: JSON.stringify(body) });
const inputsOf = (input: unknown): string[] => (typeof input === 'string' ? [input] : input as string[]);

export const cohereEmbedWire: EmbeddingsWire = {
  summarize(req) {
    assert.equal(req.url, '/v2/embed');
    const body = req.json as { model: string; texts: string[]; input_type: string; embedding_types: string[]; truncate: string; output_dimension?: number };
    assert.equal(body.input_type, 'search_document');
    assert.deepEqual(body.embedding_types, ['float']);
    assert.equal(body.truncate, 'NONE');
    return { model: body.model, inputs: body.texts, dimensions: body.output_dimension ?? null };
  },
  answer: (vectors, tokens, req) => json({
    id: 'emb-1', texts: (req.json as { texts: string[] }).texts, response_type: 'embeddings_by_type', embeddings: { float: vectors },
    meta: { api_version: { version: '2' }, ...(tokens !== null ? { billed_units: { input_tokens: tokens } } : {}) },
  }),
  errorBody: (_status, message) => json({ id: 'err-1', message }),
};

/** OpenAI's list shape, answered in reverse so that only `index` puts a vector in its place. */
function listAnswer(vectors: number[][], tokens: number | null, base64: boolean, usage: (tokens: number) => Record<string, number>): WireAnswer {
  const data = vectors.map((v, index) => ({ object: 'embedding', index, embedding: base64 ? vectorToBase64(v) : v }));
  return json({ object: 'list', data: data.reverse(), model: 'm', ...(tokens !== null ? { usage: usage(tokens) } : {}) });
}

export const voyageEmbeddingsWire: EmbeddingsWire = {
  summarize(req) {
    assert.equal(req.url, '/v1/embeddings');
    const body = req.json as { model: string; input: string | string[]; truncation: boolean; output_dimension?: number };
    assert.equal(body.truncation, false);
    return { model: body.model, inputs: inputsOf(body.input), dimensions: body.output_dimension ?? null };
  },
  answer: (vectors, tokens, req) => listAnswer(vectors, tokens, (req.json as { encoding_format?: string }).encoding_format === 'base64', (t) => ({ total_tokens: t })),
  errorBody: (_status, message) => json({ detail: message }),
};

export const jinaEmbeddingsWire: EmbeddingsWire = {
  summarize(req: RecordedUpstreamRequest) {
    assert.equal(req.url, '/v1/embeddings');
    const body = req.json as { model: string; input: string | string[]; embedding_type: string; dimensions?: number };
    assert.equal(body.embedding_type, 'float');
    return { model: body.model, inputs: inputsOf(body.input), dimensions: body.dimensions ?? null };
  },
  answer: (vectors, tokens) => listAnswer(vectors, tokens, false, (t) => ({ total_tokens: t, prompt_tokens: t })),
  errorBody: (_status, message) => json({ detail: message }),
};

export const watsonxEmbeddingsWire: EmbeddingsWire = {
  summarize(req) {
    assert.match(req.url, /^\/ml\/v1\/text\/embeddings\?version=\d{4}-\d{2}-\d{2}$/);
    const body = req.json as { model_id: string; inputs: string[]; project_id?: string };
    assert.equal(body.project_id, 'proj-1');
    return { model: body.model_id, inputs: body.inputs, dimensions: null };
  },
  answer: (vectors, tokens, req) => json({
    model_id: (req.json as { model_id: string }).model_id, results: vectors.map((embedding) => ({ embedding })),
    created_at: '2025-01-01T00:00:00.000Z', ...(tokens !== null ? { input_token_count: tokens } : {}),
  }),
  errorBody: (status, message) => json({ errors: [{ code: 'conformance', message }], trace: 'trace-1', status_code: status }),
};
