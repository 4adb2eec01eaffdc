/**
 * Bedrock's embeddings wire, InvokeModel (POST /model/{modelId}/invoke) with the model's own body, as a fake
 * speaks it. Amazon Titan Text Embeddings: {inputText, dimensions?, normalize?} -> {embedding,
 * inputTextTokenCount, embeddingsByType: {float}}. Cohere Embed: {texts, input_type, truncate?,
 * embedding_types?, output_dimension? (v4)} -> {id, embeddings: [[...]], response_type: embeddings_floats,
 * texts}, or {embeddings: {float: [...]}} (embeddings_by_type). Errors are {message} with x-amzn-errortype.
 * The credential is checked by bedrockWire(auth).refuse (SigV4 recomputed from the received bytes).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bedrockErrorBody } from './bedrock.ts';
import type { EmbeddingsWire } from '../modalities.ts';
import type { RecordedUpstreamRequest } from '../kit.ts';

const PATH = /^(.*)\/model\/([^/?]+)\/invoke$/;

const modelOf = (req: RecordedUpstreamRequest) => {
  const match = PATH.exec(req.url);
  assert.ok(match, `not an InvokeModel URL: ${req.url}`);
  return decodeURIComponent(match[2]!);
};
const isCohere = (model: string) => /(?:^|\.)cohere\.embed-/.test(model.split('/').at(-1)!);

export const bedrockEmbeddingsWire = (options: { cohereByType?: boolean } = {}): EmbeddingsWire => {
  const wire: EmbeddingsWire = {
    summarize(req) {
      const model = modelOf(req);
      assert.equal(req.headers['content-type'], 'application/json');
      const body = req.json ?? {};
      if (isCohere(model)) {
        assert.ok(Array.isArray(body.texts) && body.texts.length <= 96, 'texts: a list of at most 96');
        assert.ok(['search_document', 'search_query', 'classification', 'clustering'].includes(body.input_type), `input_type ${body.input_type}`);
        assert.deepEqual(Object.keys(body).filter((k) => !['texts', 'input_type', 'truncate', 'embedding_types', 'output_dimension'].includes(k)), []);
        return { model, inputs: body.texts as string[], dimensions: (body.output_dimension as number | undefined) ?? null };
      }
      assert.equal(typeof body.inputText, 'string', 'Titan takes one inputText');
      assert.deepEqual(Object.keys(body).filter((k) => !['inputText', 'dimensions', 'normalize', 'embeddingTypes'].includes(k)), []);
      if (body.dimensions !== undefined) assert.ok(/titan-embed-text-v2/.test(model), 'dimensions only on Titan v2');
      return { model, inputs: [body.inputText as string], dimensions: (body.dimensions as number | undefined) ?? null };
    },
    answer(vectors, tokens, req) {
      const { model, inputs } = wire.summarize(req);
      const headers = { 'x-amzn-requestid': randomUUID() };
      // Cohere on Bedrock counts no tokens: `tokens` has nowhere to go there.
      if (isCohere(model)) {
        const embeddings = options.cohereByType ? { float: vectors } : vectors;
        return { headers, body: JSON.stringify({ id: randomUUID(), embeddings, response_type: options.cohereByType ? 'embeddings_by_type' : 'embeddings_floats', texts: inputs }) };
      }
      return { headers, body: JSON.stringify({ embedding: vectors[0], ...(tokens === null ? {} : { inputTextTokenCount: tokens }), embeddingsByType: { float: vectors[0] } }) };
    },
    errorBody: bedrockErrorBody,
    // The credential is checked by bedrockWire(auth).refuse, before a request reaches this wire.
    assertAuth: () => undefined,
  };
  return wire;
};
