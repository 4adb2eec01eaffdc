/**
 * The rerank wires, as fakes speak them. Cohere's shape (https://docs.cohere.com/reference/rerank): POST
 * {model, query, documents, top_n}, answered results[{index, relevance_score}] sorted by relevance, with
 * meta.billed_units.search_units; Jina, Together, SiliconFlow, vLLM, Voyage (data[], top_k) and Bedrock's
 * InvokeModel (model in the path, api_version for Cohere models) vary it. watsonx /text/rerank: inputs [{text}],
 * results[{index, score}] as raw logits. NVIDIA NIM /ranking: query {text}, passages [{text}], rankings[{index,
 * logit}]. Vertex AI ranking: records [{id, content}], records[{id, score}].
 */
import assert from 'node:assert/strict';
import type { RecordedUpstreamRequest } from '../kit.ts';
import { logistic } from '../../../providers/shared/rerank.ts';
import type { RerankSummary, RerankWire, WireAnswer } from '../modalities.ts';

const json = (body: unknown, status?: number): WireAnswer => ({ ...(status ? { status } : {}), body: JSON.stringify(body) });
/**
 * The logit a cross-encoder would answer for relevance p, nudged by a few ulps where needed so that the
 * gateway's logistic function gives p back exactly and the fixtures can compare scores with equality.
 */
function logit(p: number): number {
  const x = Math.log(p / (1 - p));
  for (let k = 0; k <= 256; k++) {
    for (const candidate of [x + k * Number.EPSILON * Math.max(1, Math.abs(x)), x - k * Number.EPSILON * Math.max(1, Math.abs(x))]) {
      if (logistic(candidate) === p) return candidate;
    }
  }
  return x;
}

/** The documents by relevance, as providers answer: most relevant first, cut at the n asked for. */
function ranked(scores: number[], n: unknown): Array<{ index: number; score: number }> {
  const all = scores.map((score, index) => ({ index, score })).sort((a, b) => b.score - a.score);
  return typeof n === 'number' ? all.slice(0, n) : all;
}

interface CohereShape {
  /** Where the model is: the body (default) or the URL path (Bedrock). */
  modelInPath?: RegExp;
  /** The list's name: results (default) or data (Voyage). */
  list?: 'results' | 'data';
  topName?: 'top_n' | 'top_k';
  /** The fields the request may carry besides model, query, documents and the top-n field. */
  extra?: Record<string, unknown>;
  /** How the answer reports its cost. */
  meta(units: number): Record<string, unknown>;
  errorBody(status: number, message: string): unknown;
}

export function cohereShapedRerankWire(shape: CohereShape): RerankWire {
  const topName = shape.topName ?? 'top_n';
  return {
    summarize(req: RecordedUpstreamRequest): RerankSummary {
      const body = req.json as Record<string, unknown>;
      const allowed = ['model', 'query', 'documents', topName, ...Object.keys(shape.extra ?? {})];
      assert.deepEqual(Object.keys(body).filter((k) => !allowed.includes(k)), [], 'no fields the provider does not take');
      for (const [k, v] of Object.entries(shape.extra ?? {})) assert.deepEqual(body[k], v, k);
      let model = body.model as string;
      if (shape.modelInPath) {
        const match = shape.modelInPath.exec(req.url);
        assert.ok(match, `model path: ${req.url}`);
        assert.equal(body.model, undefined);
        model = decodeURIComponent(match[1]!);
      }
      return { model, query: body.query as string, documents: body.documents as string[] };
    },
    answer(scores, units, req) {
      const top = ranked(scores, (req.json as Record<string, unknown>)[topName]);
      return json({ id: 'rr-1', [shape.list ?? 'results']: top.map((r) => ({ index: r.index, relevance_score: r.score })), ...shape.meta(units) });
    },
    errorBody: (status, message) => json(shape.errorBody(status, message)),
  };
}

const detail = (_status: number, message: string) => ({ detail: message });
const openaiError = (_status: number, message: string) => ({ error: { message, type: 'invalid_request_error' } });
/** Providers that bill by tokens report them; the gateway counts search units itself. */
const tokens = () => ({ usage: { total_tokens: 21 } });

export const cohereRerankWire = cohereShapedRerankWire({
  meta: (units) => ({ meta: { api_version: { version: '2' }, billed_units: { search_units: units } } }),
  errorBody: (_status, message) => ({ id: 'err-1', message }),
});
export const jinaRerankWire = cohereShapedRerankWire({ extra: { return_documents: false }, meta: tokens, errorBody: detail });
export const voyageRerankWire = cohereShapedRerankWire({ list: 'data', topName: 'top_k', extra: { return_documents: false }, meta: tokens, errorBody: detail });
export const togetherRerankWire = cohereShapedRerankWire({ extra: { return_documents: false }, meta: () => ({ usage: { prompt_tokens: 21, completion_tokens: 0, total_tokens: 21 } }), errorBody: openaiError });
export const siliconflowRerankWire = cohereShapedRerankWire({
  extra: { return_documents: false },
  meta: (units) => ({ meta: { billed_units: { input_tokens: 21, output_tokens: 0, search_units: units, classifications: 0 }, tokens: { input_tokens: 21, output_tokens: 0 } } }),
  errorBody: openaiError,
});
export const vllmRerankWire = cohereShapedRerankWire({ meta: tokens, errorBody: (_s, message) => ({ object: 'error', message, type: 'BadRequestError' }) });
export const bedrockCohereRerankWire = cohereShapedRerankWire({ modelInPath: /^\/model\/([^/]+)\/invoke$/, extra: { api_version: 2 }, meta: () => ({}), errorBody: (_s, message) => ({ message }) });

export const watsonxRerankWire: RerankWire = {
  summarize(req) {
    const body = req.json as { model_id: string; query: string; inputs: Array<{ text: string }>; parameters?: { return_options?: { top_n?: number } } };
    assert.match(req.url, /^\/ml\/v1\/text\/rerank\?version=\d{4}-\d{2}-\d{2}$/);
    return { model: body.model_id, query: body.query, documents: body.inputs.map((i) => i.text) };
  },
  answer(scores, _units, req) {
    const top = ranked(scores, (req.json as { parameters?: { return_options?: { top_n?: number } } }).parameters?.return_options?.top_n);
    return json({ model_id: (req.json as { model_id: string }).model_id, results: top.map((r) => ({ index: r.index, score: logit(r.score) })), created_at: '2025-01-01T00:00:00.000Z', input_token_count: 21 });
  },
  errorBody: (status, message) => json({ errors: [{ code: 'conformance', message }], trace: 'trace-1', status_code: status }),
};

export const nvidiaRankingWire: RerankWire = {
  summarize(req) {
    assert.match(req.url, /\/ranking$/);
    const body = req.json as { model: string; query: { text: string }; passages: Array<{ text: string }> };
    return { model: body.model, query: body.query.text, documents: body.passages.map((p) => p.text) };
  },
  answer: (scores) => json({ rankings: ranked(scores, undefined).map((r) => ({ index: r.index, logit: logit(r.score) })) }),
  errorBody: (_status, message) => json({ detail: message }),
};

export const vertexRankingWire: RerankWire = {
  summarize(req) {
    assert.match(req.url, /\/projects\/[^/]+\/locations\/global\/rankingConfigs\/default_ranking_config:rank$/);
    const body = req.json as { model: string; query: string; records: Array<{ id: string; content: string }>; ignoreRecordDetailsInResponse?: boolean };
    assert.equal(body.ignoreRecordDetailsInResponse, true);
    body.records.forEach((r, i) => assert.equal(r.id, String(i)));
    return { model: body.model, query: body.query, documents: body.records.map((r) => r.content) };
  },
  answer: (scores, _units, req) => json({ records: ranked(scores, (req.json as { topN?: number }).topN).map((r) => ({ id: String(r.index), score: r.score })) }),
  errorBody: (status, message) => json({ error: { code: status, message, status: status === 429 ? 'RESOURCE_EXHAUSTED' : status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT' } }),
};
