/**
 * The OpenAI embeddings wire (POST /embeddings: {model, input, dimensions?, encoding_format?, user?} ->
 * {object: list, data: [{object: embedding, embedding, index}], model, usage: {prompt_tokens, total_tokens}}),
 * as the reference EmbeddingsWire, with the documented differences of the compatible servers and Azure as
 * style flags. The fake answers in the encoding it was asked for, and lists the data in reverse order (each
 * item keeps its index), so a gateway that trusted the order would be caught.
 */
import assert from 'node:assert/strict';
import { vectorToBase64 } from '../../../core/canonical/embeddings.ts';
import type { RecordedUpstreamRequest } from '../kit.ts';
import type { EmbeddingsSummary, EmbeddingsWire, WireAnswer } from '../modalities.ts';

export interface OpenAiEmbeddingsStyle {
  /** The path the request must arrive at (query aside); default `/v1/embeddings`. */
  path?: string;
  /** Where the model is: the body (default), or the path's deployment (Azure OpenAI). */
  model?: 'body' | 'deployment';
  /** The api-version query parameter the request must carry (Azure). */
  apiVersion?: string;
  /** The body's name for the shorter length (Mistral: output_dimension). */
  dimensionsField?: string;
  /** Fields the server rejects (Mistral rejects unknown fields): the request must not carry them. */
  rejects?: string[];
  /** The server has no base64 encoding: the request must not ask for it, and the answer is floats. */
  floatOnly?: boolean;
  /** Fields the server requires beside OpenAI's, with their expected values (NVIDIA NIM: input_type). */
  requires?: Record<string, unknown>;
  /** The error body the server sends (default OpenAI's `{error: {message, type, code}}`). */
  errorBody?(status: number, message: string): WireAnswer;
  /** Default: Bearer. */
  assertAuth?(req: RecordedUpstreamRequest, credential: string): void;
}

function summarize(style: OpenAiEmbeddingsStyle, req: RecordedUpstreamRequest): EmbeddingsSummary {
  const url = new URL(req.url, 'http://fake');
  assert.equal(req.method, 'POST');
  const body = req.json as Record<string, unknown>;
  let model = body.model as string;
  if (style.model === 'deployment') {
    const match = /^(.*)\/deployments\/([^/]+)\/embeddings$/.exec(url.pathname);
    assert.ok(match && match[1] === style.path, `the deployment is in the path: ${url.pathname}`);
    model = decodeURIComponent(match[2]!);
  } else {
    assert.equal(url.pathname, style.path ?? '/v1/embeddings');
  }
  if (style.apiVersion) assert.equal(url.searchParams.get('api-version'), style.apiVersion);
  for (const field of style.rejects ?? []) assert.equal(field in body, false, `the request carries ${field}, which the server rejects`);
  for (const [field, value] of Object.entries(style.requires ?? {})) assert.deepEqual(body[field], value, `the server requires ${field}`);
  if (style.floatOnly) assert.ok(body.encoding_format === undefined || body.encoding_format === 'float', 'no base64 asked of a float-only server');
  else assert.ok(body.encoding_format === 'float' || body.encoding_format === 'base64', 'the encoding is asked for');
  const dimensions = body[style.dimensionsField ?? 'dimensions'];
  return {
    model,
    inputs: typeof body.input === 'string' ? [body.input] : (body.input as string[]),
    dimensions: typeof dimensions === 'number' ? dimensions : null,
  };
}

export function openAiEmbeddingsBody(vectors: number[][], tokens: number | null, model: string, base64: boolean) {
  const data = vectors.map((vector, index) => ({ object: 'embedding', embedding: base64 ? vectorToBase64(vector) : vector, index })).reverse();
  return { object: 'list', data, model, ...(tokens === null ? {} : { usage: { prompt_tokens: tokens, total_tokens: tokens } }) };
}

const openAiError = (status: number, message: string): WireAnswer => ({
  body: JSON.stringify({ error: { message, type: status === 429 ? 'rate_limit_exceeded' : 'invalid_request_error', code: null, param: null } }),
});

export function openAiEmbeddingsWire(style: OpenAiEmbeddingsStyle = {}): EmbeddingsWire {
  return {
    summarize: (req) => summarize(style, req),
    answer(vectors, tokens, req) {
      const base64 = !style.floatOnly && req.json?.encoding_format === 'base64';
      const model = summarize(style, req).model;
      return { body: JSON.stringify(openAiEmbeddingsBody(vectors, tokens, model, base64)) };
    },
    errorBody: style.errorBody ?? openAiError,
    ...(style.assertAuth ? { assertAuth: style.assertAuth } : {}),
  };
}
