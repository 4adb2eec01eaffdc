/**
 * The conformance kit: every chat translator runs the same fixtures, through a real gateway and the official
 * openai client, against a loopback fake that speaks the translator's wire format (a FamilyWire). Its streams
 * are also decoded in-process with the bytes split at every boundary. A third-party translator package runs
 * the kit the same way: write a FamilyWire for its format and call runConformance.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../../core/canonical/chat.ts';
import type { ProviderDefinition, ProviderTarget } from '../../core/dispatch/provider.ts';
import { decodeStream } from '../../core/streaming/decode.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { ERROR_CASES, FIXTURES, type Fixture, type ScriptedAnswer, type ScriptedToolCall, type WireSummary } from './fixtures.ts';
import { runModalityConformance, type ModalityTarget } from './modalities.ts';
import { startRecordingServer } from './recording-server.ts';

export { runModalityConformance, scriptedVectors } from './modalities.ts';
export type { EmbeddingsSummary, EmbeddingsWire, ModalityTarget, RerankSummary, RerankWire, WireAnswer } from './modalities.ts';

export interface RecordedUpstreamRequest {
  method: string;
  /** Path and query, as received. */
  url: string;
  headers: IncomingMessage['headers'];
  rawBody: string;
  /** The body parsed as JSON, or null. */
  json: any;
}

/** A provider wire format, as a fake upstream speaks it. */
export interface FamilyWire {
  /** The native request -> the family-neutral summary the fixtures check. */
  summarize(req: RecordedUpstreamRequest): WireSummary;
  /** Whether the request asks for a streaming answer. */
  isStream(req: RecordedUpstreamRequest): boolean;
  /** A complete non-streaming answer. */
  answerJson(answer: ScriptedAnswer, req: RecordedUpstreamRequest): { headers?: Record<string, string>; body: string };
  /** The answer as the provider streams it, as bytes. */
  answerStream(answer: ScriptedAnswer, req: RecordedUpstreamRequest): { headers: Record<string, string>; body: Uint8Array };
  /** The provider's error answer for a status. */
  errorBody(status: number, message: string): { headers?: Record<string, string>; body: string };
  /** Asserts that the gateway's credential for this provider arrived where the provider expects it. */
  assertAuth(req: RecordedUpstreamRequest, credential: string): void;
}

export interface ConformanceTarget {
  provider: ProviderDefinition;
  wire: FamilyWire;
  /** The value under `providers.<slug>` in pipelines.yaml (indented by the kit), pointing at `baseUrl`. */
  providerBlock(baseUrl: string): string;
  /** The credential the fake must see (from providerBlock). */
  credential: string;
  /** Extra endpoints of the fake (token exchange, ...): return true when handled. */
  extraRoutes?(req: RecordedUpstreamRequest, res: ServerResponse): boolean | Promise<boolean>;
  /** Summary fields this family cannot express, not compared. `toolCallIds`: the family has no call ids. */
  ignore?: Array<keyof WireSummary | 'toolCallIds'>;
  /** Fixtures left out, each with the reason (a capability the provider lacks is refused, and tested so). */
  without?: Record<string, string>;
  /** Environment for the gateway (secrets the provider block references). */
  env?: NodeJS.ProcessEnv;
  /** A translator that is not built in: its npm package name or absolute path, loaded as providerPackages. */
  package?: string;
  /** The upstream model name the gateway's model maps to (default UPSTREAM_MODEL), for hosts that route by it. */
  upstreamModel?: string;
  /**
   * 'estimated': the family's streams carry no usage (Replicate's output stream), so a streamed answer's usage is
   * the gateway's estimate: the kit checks that it is there, not its value. Default 'reported'.
   */
  streamUsage?: 'reported' | 'estimated';
  /** The provider's embeddings wire: the embeddings fixtures run too (modalities.ts). */
  embeddings?: ModalityTarget['embeddings'];
  /** The provider's rerank wire: the rerank fixtures run too. */
  rerank?: ModalityTarget['rerank'];
}

type Mode = { kind: 'answer'; answer: ScriptedAnswer } | { kind: 'error'; status: number } | { kind: 'malformed' } | { kind: 'hang' };

export interface WireFake {
  url: string;
  requests: RecordedUpstreamRequest[];
  mode: Mode;
  close(): Promise<void>;
}

/** Writes bytes in pieces of varying, awkward sizes, as a network might deliver them. */
async function writeInPieces(res: ServerResponse, bytes: Uint8Array): Promise<void> {
  const sizes = [1, 7, 2, 13, 3, 31, 5];
  let at = 0;
  for (let i = 0; at < bytes.length; i++) {
    const size = sizes[i % sizes.length]!;
    res.write(bytes.subarray(at, at + size));
    at += size;
    if (i % 4 === 3) await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}

export async function startWireFake(target: ConformanceTarget): Promise<WireFake> {
  const fake: Pick<WireFake, 'mode'> = { mode: { kind: 'hang' } };
  const server = await startRecordingServer((req, res) => target.extraRoutes?.(req, res) ?? false, async (req, res) => {
    const mode = fake.mode;
    if (mode.kind === 'hang') return; // the gateway's headers timeout answers
    if (mode.kind === 'error') {
      const error = target.wire.errorBody(mode.status, `scripted ${mode.status}`);
      res.writeHead(mode.status, { 'content-type': 'application/json', ...(error.headers ?? {}) });
      res.end(error.body);
      return;
    }
    if (mode.kind === 'malformed') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"this is": not json');
      return;
    }
    if (target.wire.isStream(req)) {
      const stream = target.wire.answerStream(mode.answer, req);
      res.writeHead(200, stream.headers);
      await writeInPieces(res, stream.body);
      return;
    }
    const answer = target.wire.answerJson(mode.answer, req);
    res.writeHead(200, { 'content-type': 'application/json', ...(answer.headers ?? {}) });
    res.end(answer.body);
  });
  return Object.assign(fake, server);
}

/** What a caller assembles from canonical chunks. */
export interface Assembled {
  text: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  finish: string | null;
  usage: { prompt_tokens: number; completion_tokens: number } | null;
}

export function assemble(chunks: Iterable<ChatCompletionChunk>): Assembled {
  const result: Assembled = { text: '', toolCalls: [], finish: null, usage: null };
  for (const chunk of chunks) {
    if (chunk.usage) result.usage = { prompt_tokens: chunk.usage.prompt_tokens, completion_tokens: chunk.usage.completion_tokens };
    for (const choice of chunk.choices) {
      result.text += choice.delta.content ?? '';
      for (const call of choice.delta.tool_calls ?? []) {
        const slot = (result.toolCalls[call.index] ??= { id: '', name: '', arguments: '' });
        if (call.id) slot.id = call.id;
        if (call.function?.name) slot.name += call.function.name;
        if (call.function?.arguments) slot.arguments += call.function.arguments;
      }
      if (choice.finish_reason) result.finish = choice.finish_reason;
    }
  }
  return result;
}

function expectedCalls(calls: ScriptedToolCall[], ignoreIds: boolean) {
  return calls.map((c) => ({ ...(ignoreIds ? {} : { id: c.id }), name: c.name, arguments: JSON.parse(c.arguments) as unknown }));
}

function actualCalls(calls: Array<{ id: string; name: string; arguments: string }>, ignoreIds: boolean) {
  return calls.map((c) => {
    assert.ok(c.id, `tool call ${c.name} has an id`);
    return { ...(ignoreIds ? {} : { id: c.id }), name: c.name, arguments: JSON.parse(c.arguments) as unknown };
  });
}

function checkSummary(target: ConformanceTarget, fixture: Fixture, summary: WireSummary, stream: boolean, model: string): void {
  const ignore = new Set(target.ignore ?? []);
  assert.equal(summary.stream, stream, 'the upstream was asked for a stream exactly when the caller was');
  if (!ignore.has('model')) assert.equal(summary.model, model);
  for (const [field, value] of Object.entries(fixture.expect) as Array<[keyof WireSummary, unknown]>) {
    if (ignore.has(field)) continue;
    let actual: unknown = summary[field];
    let expected = value;
    if (field === 'turns' && ignore.has('toolCallIds')) {
      const strip = (turns: unknown) => (turns as WireSummary['turns']).map(({ toolCallId: _t, ...turn }) => ({
        ...turn, ...(turn.toolCalls ? { toolCalls: turn.toolCalls.map(({ id: _i, ...call }) => call) } : {}),
      }));
      actual = strip(actual);
      expected = strip(expected);
    }
    assert.deepEqual(actual, expected, `upstream ${field}`);
  }
}

export const CONFORMANCE_MODEL = 'conformance-model';
export const UPSTREAM_MODEL = 'upstream-model-1';

/** Defines the kit's tests for one provider. */
export function runConformance(target: ConformanceTarget): void {
  const { provider } = target;
  const upstreamModel = target.upstreamModel ?? UPSTREAM_MODEL;
  const ignoreIds = (target.ignore ?? []).includes('toolCallIds');
  const fixtures = FIXTURES.filter((f) => !target.without?.[f.name]);

  if (target.embeddings || target.rerank) runModalityConformance(target);

  describe(`conformance: ${provider.slug}`, () => {
    let fake: WireFake;
    let gw: TestGateway;
    let client: OpenAI;
    let messagesClient: Anthropic;

    before(async () => {
      fake = await startWireFake(target);
      const block = target.providerBlock(fake.url).split('\n').map((line) => `    ${line}`).join('\n');
      gw = await startTestGateway(`${target.package ? `providerPackages: [${JSON.stringify(target.package)}]\n` : ''}
upstream:
  headersTimeoutMs: 400
routing:
  retries: 0
providers:
  ${provider.slug}:
${block}
models:
  - id: ${CONFORMANCE_MODEL}
    provider: ${provider.slug}
    upstreamModel: ${upstreamModel}
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [auth]
`, { env: target.env ?? {} });
      const key = await gw.createKey();
      client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
      messagesClient = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
    });
    after(async () => {
      await gw?.close();
      await fake?.close();
    });

    const request = (fixture: Fixture) => ({ ...fixture.request, model: CONFORMANCE_MODEL }) as ChatCompletionRequest;

    for (const fixture of fixtures) {
      test(`${fixture.name}`, async () => {
        fake.mode = { kind: 'answer', answer: fixture.answer };
        const { data, response } = await client.chat.completions.create(request(fixture) as never).withResponse();
        assert.equal(response.headers.get('x-provider'), provider.slug);
        const completion = data as unknown as { choices: Array<{ message: { content: string | null; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }> }; finish_reason: string }>; usage: { prompt_tokens: number; completion_tokens: number } };
        const choice = completion.choices[0]!;
        assert.equal(choice.message.content ?? '', fixture.answer.text);
        assert.deepEqual(
          actualCalls((choice.message.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })), ignoreIds),
          expectedCalls(fixture.answer.toolCalls, ignoreIds),
        );
        assert.equal(choice.finish_reason, fixture.answer.finish);
        assert.deepEqual(
          { prompt: completion.usage.prompt_tokens, completion: completion.usage.completion_tokens },
          fixture.answer.usage,
        );
        const seen = fake.requests.at(-1)!;
        target.wire.assertAuth(seen, target.credential);
        checkSummary(target, fixture, target.wire.summarize(seen), false, upstreamModel);
      });

      if (!fixture.stream || !provider.capabilities.chat?.stream) continue;
      test(`${fixture.name}, streaming`, async () => {
        fake.mode = { kind: 'answer', answer: fixture.answer };
        const stream = await client.chat.completions.create({ ...request(fixture), stream: true, stream_options: { include_usage: true } } as never);
        const chunks: ChatCompletionChunk[] = [];
        for await (const chunk of stream as unknown as AsyncIterable<ChatCompletionChunk>) chunks.push(chunk);
        const got = assemble(chunks);
        assert.equal(got.text, fixture.answer.text);
        assert.deepEqual(actualCalls(got.toolCalls, ignoreIds), expectedCalls(fixture.answer.toolCalls, ignoreIds));
        assert.equal(got.finish, fixture.answer.finish);
        if (target.streamUsage === 'estimated') {
          assert.ok(got.usage && got.usage.prompt_tokens > 0 && (got.usage.completion_tokens > 0 || fixture.answer.text === ''), 'the gateway estimated the usage');
        } else {
          assert.deepEqual(got.usage && { prompt: got.usage.prompt_tokens, completion: got.usage.completion_tokens }, fixture.answer.usage);
        }
        checkSummary(target, fixture, target.wire.summarize(fake.requests.at(-1)!), true, upstreamModel);
      });
    }

    test('through the Messages API (@anthropic-ai/sdk): text, and a tool call where the provider has tools', async () => {
      const plain = FIXTURES[0]!;
      fake.mode = { kind: 'answer', answer: plain.answer };
      const message = await messagesClient.messages.create({ model: CONFORMANCE_MODEL, max_tokens: 200, messages: [{ role: 'user', content: 'Say hello' }] });
      assert.deepEqual(message.content, [{ type: 'text', text: plain.answer.text }]);
      assert.equal(message.stop_reason, 'end_turn');
      assert.deepEqual([message.usage.input_tokens, message.usage.output_tokens], [plain.answer.usage.prompt, plain.answer.usage.completion]);
      if (provider.capabilities.chat?.stream) {
        const stream = messagesClient.messages.stream({ model: CONFORMANCE_MODEL, max_tokens: 200, messages: [{ role: 'user', content: 'Say hello' }] });
        assert.equal(await stream.finalText(), plain.answer.text);
      }
      const toolFixture = FIXTURES.find((f) => f.name === 'a tool call')!;
      if (!provider.capabilities.chat?.tools || target.without?.[toolFixture.name]) return;
      fake.mode = { kind: 'answer', answer: toolFixture.answer };
      const tools = [{ name: 'get_weather', description: 'Current weather for a city', input_schema: { type: 'object' as const, properties: { location: { type: 'string' } }, required: ['location'] } }];
      const called = await messagesClient.messages.create({ model: CONFORMANCE_MODEL, max_tokens: 200, tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
      assert.equal(called.stop_reason, 'tool_use');
      const uses = called.content.filter((b) => b.type === 'tool_use');
      assert.deepEqual(uses.map((b) => ({ name: b.name, input: b.input })), [{ name: 'get_weather', input: { location: 'Paris' } }]);
      if (provider.capabilities.chat?.stream) {
        // The spec's known streaming behaviour: tool calls are dropped from a Messages stream.
        const stream = messagesClient.messages.stream({ model: CONFORMANCE_MODEL, max_tokens: 200, tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
        const final = await stream.finalMessage();
        assert.ok(final.content.every((b) => b.type === 'text'), JSON.stringify(final.content));
      }
    });

    if (provider.capabilities.chat?.stream) {
      test('its stream decodes the same with the bytes split at every boundary', async () => {
        for (const fixture of FIXTURES.filter((f) => f.stream && !target.without?.[f.name])) {
          const canonical = request(fixture);
          const upstreamTarget: ProviderTarget = { slug: provider.slug, baseUrl: fake.url, headers: {}, options: {}, upstreamModel };
          const recorded: RecordedUpstreamRequest = { method: 'POST', url: '/', headers: {}, rawBody: '', json: null };
          const bytes = target.wire.answerStream(fixture.answer, recorded).body;
          const decodeSplit = async (cuts: number[]) => {
            const bounds = [0, ...cuts, bytes.length];
            const source = (async function* () {
              for (let i = 1; i < bounds.length; i++) yield bytes.subarray(bounds[i - 1]!, bounds[i]!);
            })();
            const decoder = provider.chat!.streamDecoder(upstreamTarget, canonical);
            const chunks: ChatCompletionChunk[] = [];
            for await (const event of decodeStream(provider.chat!.streamFormat, source)) {
              const { chunks: out, done } = decoder.event(event);
              chunks.push(...out);
              if (done) break;
            }
            chunks.push(...decoder.end());
            return assemble(chunks);
          };
          const whole = await decodeSplit([]);
          assert.equal(whole.text, fixture.answer.text, `${fixture.name}: text`);
          assert.equal(whole.finish, fixture.answer.finish, `${fixture.name}: finish`);
          for (let cut = 1; cut < bytes.length; cut++) {
            assert.deepEqual(await decodeSplit([cut]), whole, `${fixture.name}: split at byte ${cut}`);
          }
        }
      });
    }

    for (const { status, expectStatus, expectCode } of ERROR_CASES) {
      test(`upstream ${status} -> ${expectStatus} ${expectCode}`, async () => {
        fake.mode = { kind: 'error', status };
        const error = await client.chat.completions.create(request(FIXTURES[0]!) as never).then(() => null, (err: unknown) => err);
        assert.ok(error instanceof OpenAI.APIError, `expected an API error, got ${String(error)}`);
        assert.equal(error.status, expectStatus);
        assert.equal((error.error as { code?: string } | undefined)?.code, expectCode);
      });
    }

    test('a malformed upstream body -> 502 UPSTREAM_ERROR', async () => {
      fake.mode = { kind: 'malformed' };
      const error = await client.chat.completions.create(request(FIXTURES[0]!) as never).then(() => null, (err: unknown) => err);
      assert.ok(error instanceof OpenAI.APIError);
      assert.equal(error.status, 502);
    });

    test('an upstream that does not answer -> 504 UPSTREAM_TIMEOUT', async () => {
      fake.mode = { kind: 'hang' };
      const error = await client.chat.completions.create(request(FIXTURES[0]!) as never).then(() => null, (err: unknown) => err);
      assert.ok(error instanceof OpenAI.APIError);
      assert.equal(error.status, 504);
      assert.equal((error.error as { code?: string } | undefined)?.code, 'UPSTREAM_TIMEOUT');
    });
  });
}
