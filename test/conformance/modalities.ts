/**
 * The conformance kit for embeddings and rerank: every translator of these modalities runs the same fixtures
 * through a real gateway (the openai client for embeddings, plain fetch for rerank, which the client lacks),
 * against a loopback fake that speaks the provider's wire format. A wire format is an EmbeddingsWire or a
 * RerankWire: how to read the native request (summarize), how the provider answers (answer) and fails
 * (errorBody). runConformance runs these suites too when a target names them; providers without chat (voyage,
 * jina) call runModalityConformance directly.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { base64ToVector } from '../../core/canonical/embeddings.ts';
import type { ProviderDefinition } from '../../core/dispatch/provider.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { ERROR_CASES } from './fixtures.ts';
import type { RecordedUpstreamRequest } from './kit.ts';
import { startRecordingServer } from './recording-server.ts';

/** A fake's answer: status 200 unless given. */
export interface WireAnswer { status?: number; headers?: Record<string, string>; body: string }

/** An embeddings request as the upstream saw it, whatever its format. */
export interface EmbeddingsSummary {
  model: string;
  inputs: string[];
  /** The shorter length asked for, or null. */
  dimensions: number | null;
}

export interface EmbeddingsWire {
  summarize(req: RecordedUpstreamRequest): EmbeddingsSummary;
  /**
   * The provider's answer with these vectors (one per input, in input order) and input tokens (null: the
   * provider reports none). A wire that can answer in any order should not answer in input order.
   */
  answer(vectors: number[][], tokens: number | null, req: RecordedUpstreamRequest): WireAnswer;
  errorBody(status: number, message: string): WireAnswer;
  /** Default: `Authorization: Bearer <credential>`. */
  assertAuth?(req: RecordedUpstreamRequest, credential: string): void;
}

/** A rerank request as the upstream saw it. */
export interface RerankSummary {
  model: string;
  query: string;
  documents: string[];
}

export interface RerankWire {
  summarize(req: RecordedUpstreamRequest): RerankSummary;
  /** The provider's answer with these scores (one per document, by document index) and billed search units. */
  answer(scores: number[], searchUnits: number, req: RecordedUpstreamRequest): WireAnswer;
  errorBody(status: number, message: string): WireAnswer;
  assertAuth?(req: RecordedUpstreamRequest, credential: string): void;
}

export interface ModalityTarget {
  provider: ProviderDefinition;
  /** The value under `providers.<slug>` in pipelines.yaml, pointing at `baseUrl`. */
  providerBlock(baseUrl: string): string;
  credential: string;
  env?: NodeJS.ProcessEnv;
  package?: string;
  /** Extra endpoints of the fake (token exchange, ...): return true when handled. */
  extraRoutes?(req: RecordedUpstreamRequest, res: ServerResponse): boolean | Promise<boolean>;
  embeddings?: {
    wire: EmbeddingsWire;
    /** An upstream model without shorter vectors (default `embed-model-1`). */
    model?: string;
    /** An upstream model with them, or null when the provider has none (then `dimensions` is always refused). */
    dimensionsModel: string | null;
    /** The shorter length asked of dimensionsModel (default 3); for models with a fixed set of sizes, one of them. */
    dimensions?: number;
    /** false for providers whose answer counts no tokens (Gemini, Cohere on Bedrock): the gateway's estimate is checked instead. */
    reportsUsage?: boolean;
  };
  /**
   * `reportsSearchUnits: false` for providers whose answer bills no search units (most bill tokens): the gateway
   * then counts one per 100 documents.
   */
  rerank?: { wire: RerankWire; model?: string; reportsSearchUnits?: boolean };
}

type FakeMode =
  | { kind: 'embed'; vectors: number[][]; tokens: number | null }
  | { kind: 'rank'; scores: number[]; units: number }
  | { kind: 'error'; status: number }
  | { kind: 'malformed' };

interface ModalityFake {
  url: string;
  requests: RecordedUpstreamRequest[];
  mode: FakeMode;
  close(): Promise<void>;
}

async function startModalityFake(target: ModalityTarget, errorWire: () => EmbeddingsWire | RerankWire): Promise<ModalityFake> {
  const fake: Pick<ModalityFake, 'mode'> = { mode: { kind: 'malformed' } };
  const server = await startRecordingServer((req, res) => target.extraRoutes?.(req, res) ?? false, (req, res) => {
    const mode = fake.mode;
    const send = (answer: WireAnswer) => {
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...(answer.headers ?? {}) });
      res.end(answer.body);
    };
    if (mode.kind === 'error') send({ ...errorWire().errorBody(mode.status, `scripted ${mode.status}`), status: mode.status });
    else if (mode.kind === 'malformed') send({ body: '{"this is": not json' });
    else if (mode.kind === 'embed') send(target.embeddings!.wire.answer(mode.vectors, mode.tokens, req));
    else send(target.rerank!.wire.answer(mode.scores, mode.units, req));
  });
  return Object.assign(fake, server);
}

/** Vectors exact in float32 (multiples of 1/8), distinct per input, so a misplaced one is seen. */
export function scriptedVectors(count: number, length: number): number[][] {
  return Array.from({ length: count }, (_, i) => Array.from({ length }, (_, j) => (i + 1) * 0.5 - j * 0.125));
}

const bearer = (req: RecordedUpstreamRequest, credential: string) => assert.equal(req.headers.authorization, `Bearer ${credential}`);

export const EMBED_MODEL = 'conformance-embed';
export const EMBED_DIMS_MODEL = 'conformance-embed-dims';
export const RERANK_MODEL = 'conformance-rerank';

interface ApiErrorLike { status?: number; error?: { code?: string; details?: unknown } }
const failure = (promise: Promise<unknown>) => promise.then(() => null, (err: unknown) => err as ApiErrorLike);

/** Defines the embeddings and rerank suites for one provider (those its target names). */
export function runModalityConformance(target: ModalityTarget): void {
  const { provider, embeddings, rerank } = target;
  if (!embeddings && !rerank) throw new Error(`${provider.slug}: a modality target needs embeddings or rerank`);
  const embedModel = embeddings?.model ?? 'embed-model-1';
  const rerankModel = rerank?.model ?? 'rerank-model-1';

  describe(`conformance: ${provider.slug} embeddings and rerank`, () => {
    let fake: ModalityFake;
    let gw: TestGateway;
    let key: string;
    let client: OpenAI;
    let errorFamily: 'embeddings' | 'rerank' = 'embeddings';

    before(async () => {
      fake = await startModalityFake(target, () => (errorFamily === 'embeddings' ? embeddings!.wire : rerank!.wire));
      const block = target.providerBlock(fake.url).split('\n').map((line) => `    ${line}`).join('\n');
      const models = [
        ...(embeddings ? [`  - { id: ${EMBED_MODEL}, provider: ${provider.slug}, upstreamModel: ${JSON.stringify(embedModel)} }`] : []),
        ...(embeddings?.dimensionsModel ? [`  - { id: ${EMBED_DIMS_MODEL}, provider: ${provider.slug}, upstreamModel: ${JSON.stringify(embeddings.dimensionsModel)} }`] : []),
        ...(rerank ? [`  - { id: ${RERANK_MODEL}, provider: ${provider.slug}, upstreamModel: ${JSON.stringify(rerankModel)} }`] : []),
      ];
      gw = await startTestGateway(`${target.package ? `providerPackages: [${JSON.stringify(target.package)}]\n` : ''}
upstream:
  headersTimeoutMs: 2000
routing:
  retries: 0
providers:
  ${provider.slug}:
${block}
models:
${models.join('\n')}
pipelines:
  - name: data
    routes: [/v1/embeddings, /v1/rerank]
    plugins: [auth]
`, { env: target.env ?? {} });
      key = await gw.createKey({ scopes: { capabilities: ['embeddings', 'rerank'] } });
      client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
    });
    after(async () => {
      await gw?.close();
      await fake?.close();
    });

    const lastRequest = () => fake.requests.at(-1)!;
    const noRequestSince = (count: number) => assert.equal(fake.requests.length, count, 'the upstream was not called');

    if (embeddings) {
      const wire = embeddings.wire;
      const embed = (vectors: number[][], tokens: number | null = 9) => {
        errorFamily = 'embeddings';
        fake.mode = { kind: 'embed', vectors, tokens };
      };

      test('embeddings: one input, floats', async () => {
        const vectors = scriptedVectors(1, 4);
        embed(vectors, 5);
        const { data, response } = await client.embeddings.create({ model: EMBED_MODEL, input: 'The quick brown fox', encoding_format: 'float' }).withResponse();
        assert.equal(response.headers.get('x-provider'), provider.slug);
        assert.equal(response.headers.get('x-model'), embedModel);
        assert.equal(data.object, 'list');
        assert.equal(data.model, embedModel);
        assert.deepEqual(data.data, [{ object: 'embedding', embedding: vectors[0], index: 0 }]);
        if (embeddings.reportsUsage === false) assert.ok(data.usage.prompt_tokens > 0 && data.usage.total_tokens === data.usage.prompt_tokens, 'the gateway estimates the usage');
        else assert.deepEqual(data.usage, { prompt_tokens: 5, total_tokens: 5 });
        (wire.assertAuth ?? bearer)(lastRequest(), target.credential);
        assert.deepEqual(wire.summarize(lastRequest()), { model: embedModel, inputs: ['The quick brown fox'], dimensions: null });
      });

      test('embeddings: a batch keeps its order by index', async () => {
        const vectors = scriptedVectors(3, 4);
        embed(vectors);
        const inputs = ['first', 'second', 'third'];
        const data = await client.embeddings.create({ model: EMBED_MODEL, input: inputs, encoding_format: 'float' });
        assert.deepEqual(data.data.map((d) => [d.index, d.embedding]), vectors.map((v, i) => [i, v]));
        assert.deepEqual(wire.summarize(lastRequest()).inputs, inputs);
      });

      test('embeddings: base64 both ways (the client\'s default base64, and base64 asked of the gateway)', async () => {
        const vectors = scriptedVectors(2, 4);
        embed(vectors);
        const decoded = await client.embeddings.create({ model: EMBED_MODEL, input: ['a', 'b'] });
        assert.deepEqual(decoded.data.map((d) => d.embedding), vectors);
        const raw = await postJson(`${gw.url}/v1/embeddings`, { model: EMBED_MODEL, input: ['a', 'b'], encoding_format: 'base64' }, { authorization: `Bearer ${key}` });
        assert.equal(raw.status, 200);
        assert.deepEqual(raw.body.data.map((d: { embedding: string }) => base64ToVector(d.embedding)), vectors);
      });

      if (embeddings.dimensionsModel) {
        test('embeddings: dimensions on a model with shorter vectors', async () => {
          const length = embeddings.dimensions ?? 3;
          const vectors = scriptedVectors(1, length);
          embed(vectors);
          const data = await client.embeddings.create({ model: EMBED_DIMS_MODEL, input: 'short', dimensions: length, encoding_format: 'float' });
          assert.deepEqual(data.data[0]!.embedding, vectors[0]);
          assert.equal(wire.summarize(lastRequest()).dimensions, length);
        });
      }

      // A provider whose server decides (vLLM) has no model the gateway refuses `dimensions` for.
      if (!provider.embeddings?.supportsDimensions(embedModel)) test('embeddings: dimensions on a model without them -> 400 CAPABILITY_NOT_SUPPORTED before any I/O', async () => {
        const before = fake.requests.length;
        const err = await failure(client.embeddings.create({ model: EMBED_MODEL, input: 'x', dimensions: 3 }));
        assert.equal(err?.status, 400);
        assert.equal(err?.error?.code, 'CAPABILITY_NOT_SUPPORTED');
        assert.deepEqual(err?.error?.details, { provider: provider.slug, capability: 'dimensions', model: embedModel });
        noRequestSince(before);
      });

      test('embeddings: empty input -> 400 VALIDATION_ERROR before any I/O', async () => {
        const before = fake.requests.length;
        for (const input of ['', [] as string[], ['ok', '']]) {
          const err = await failure(client.embeddings.create({ model: EMBED_MODEL, input }));
          assert.equal(err?.status, 400, JSON.stringify(input));
          assert.equal(err?.error?.code, 'VALIDATION_ERROR');
        }
        noRequestSince(before);
      });

      for (const { status, expectStatus, expectCode } of ERROR_CASES) {
        test(`embeddings: upstream ${status} -> ${expectStatus} ${expectCode}`, async () => {
          errorFamily = 'embeddings';
          fake.mode = { kind: 'error', status };
          const err = await failure(client.embeddings.create({ model: EMBED_MODEL, input: 'x' }));
          assert.equal(err?.status, expectStatus);
          assert.equal(err?.error?.code, expectCode);
        });
      }

      test('embeddings: a malformed upstream body -> 502 UPSTREAM_ERROR', async () => {
        fake.mode = { kind: 'malformed' };
        const err = await failure(client.embeddings.create({ model: EMBED_MODEL, input: 'x' }));
        assert.equal(err?.status, 502);
        assert.equal(err?.error?.code, 'UPSTREAM_ERROR');
      });
    }

    if (rerank) {
      const wire = rerank.wire;
      const rank = (scores: number[], units = 1) => {
        errorFamily = 'rerank';
        fake.mode = { kind: 'rank', scores, units };
      };
      const documents = ['Paris is in France', 'Berlin is in Germany', 'The capital of France is Paris', 'Bananas are yellow'];
      const call = (body: Record<string, unknown>) => postJson(`${gw.url}/v1/rerank`, { model: RERANK_MODEL, query: 'capital of France', documents, ...body }, { authorization: `Bearer ${key}` });

      test('rerank: sorted by relevance, ties in document order, id mirrors X-Request-ID, no model field', async () => {
        rank([0.5, 0.125, 0.875, 0.5], 2);
        const res = await call({});
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual(res.body.results, [{ index: 2, relevance_score: 0.875 }, { index: 0, relevance_score: 0.5 }, { index: 3, relevance_score: 0.5 }, { index: 1, relevance_score: 0.125 }]);
        assert.equal(res.body.id, res.headers.get('x-request-id'));
        assert.equal('model' in res.body, false);
        assert.equal(res.headers.get('x-model'), rerankModel);
        assert.equal(res.headers.get('x-provider'), provider.slug);
        assert.deepEqual(res.body.meta, { billed_units: { search_units: rerank.reportsSearchUnits === false ? 1 : 2 } });
        (wire.assertAuth ?? bearer)(lastRequest(), target.credential);
        assert.deepEqual(wire.summarize(lastRequest()), { model: rerankModel, query: 'capital of France', documents });
      });

      test('rerank: top_n and return_documents', async () => {
        rank([0.25, 0.5, 0.75, 0.125]);
        const res = await call({ top_n: 2, return_documents: true });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual(res.body.results, [
          { index: 2, relevance_score: 0.75, document: { text: documents[2] } },
          { index: 1, relevance_score: 0.5, document: { text: documents[1] } },
        ]);
      });

      test('rerank: documents outside 1 to 10,000, and top_n past them -> 400 VALIDATION_ERROR before any I/O', async () => {
        const before = fake.requests.length;
        for (const body of [{ documents: [] }, { documents: Array.from({ length: 10_001 }, (_, i) => `d${i}`) }, { top_n: 5 }, { top_n: 0 }]) {
          const res = await call(body);
          assert.equal(res.status, 400, JSON.stringify(Object.keys(body)));
          assert.equal(res.body.error.code, 'VALIDATION_ERROR');
        }
        noRequestSince(before);
      });

      for (const { status, expectStatus, expectCode } of ERROR_CASES) {
        test(`rerank: upstream ${status} -> ${expectStatus} ${expectCode}`, async () => {
          errorFamily = 'rerank';
          fake.mode = { kind: 'error', status };
          const res = await call({});
          assert.equal(res.status, expectStatus);
          assert.equal(res.body.error.code, expectCode);
        });
      }
    }
  });
}
