/**
 * Azure's OpenAI-shaped wires. Azure OpenAI: POST {resource}/openai/deployments/{deployment}/chat/completions
 * ?api-version=..., key in `api-key`, the deployment (not the body) picks the model. Azure AI model inference:
 * POST {resource}/models/chat/completions?api-version=..., model in the body. Both annotate answers with
 * content-filter results, and their streams open with a chunk that has no choices, only the prompt's
 * filter results. Their error bodies carry Azure codes.
 */
import assert from 'node:assert/strict';
import type { ScriptedAnswer, WireSummary } from '../fixtures.ts';
import type { FamilyWire, RecordedUpstreamRequest } from '../kit.ts';
import { openAiCompletion, openAiStreamEvents, summarizeOpenAiBody } from './openai.ts';

const SAFE = { hate: { filtered: false, severity: 'safe' }, self_harm: { filtered: false, severity: 'safe' }, sexual: { filtered: false, severity: 'safe' }, violence: { filtered: false, severity: 'safe' } };
const PROMPT_FILTER = [{ prompt_index: 0, content_filter_results: SAFE }];

export interface AzureWireStyle {
  /** `deployment`: the model is the path's deployment; `body`: the model is in the body (AI inference). */
  model: 'deployment' | 'body';
  /** The expected path prefix before /chat/completions (the deployment's path for Azure OpenAI). */
  pathPrefix: string;
  apiVersion: string;
}

function summarize(style: AzureWireStyle, req: RecordedUpstreamRequest): WireSummary {
  const url = new URL(req.url, 'http://fake');
  assert.equal(req.method, 'POST');
  assert.equal(url.searchParams.get('api-version'), style.apiVersion, 'every Azure call names its api-version');
  const deployment = /^(.*)\/deployments\/([^/]+)\/chat\/completions$/.exec(url.pathname);
  const summary = summarizeOpenAiBody(req.json);
  if (style.model === 'deployment') {
    assert.ok(deployment, `Azure OpenAI takes the deployment in the path, got ${url.pathname}`);
    assert.equal(deployment[1], style.pathPrefix);
    summary.model = decodeURIComponent(deployment[2]!);
  } else {
    assert.equal(url.pathname, `${style.pathPrefix}/chat/completions`);
  }
  return summary;
}

function answerJson(answer: ScriptedAnswer, req: RecordedUpstreamRequest): string {
  const completion = openAiCompletion(answer, req.json?.model ?? 'gpt-4o-2024-08-06') as any;
  completion.prompt_filter_results = PROMPT_FILTER;
  completion.choices[0].content_filter_results = SAFE;
  return JSON.stringify(completion);
}

function answerStream(answer: ScriptedAnswer, req: RecordedUpstreamRequest): string {
  const asked = req.json === null || req.json?.stream_options?.include_usage === true;
  const events = openAiStreamEvents(answer, req.json?.model ?? 'gpt-4o-2024-08-06')
    .filter((e) => asked || !e.includes('"choices":[]'))
    .map((e) => e.replace('"logprobs":null}', `"logprobs":null,"content_filter_results":${JSON.stringify(SAFE)}}`));
  const opening = { choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: PROMPT_FILTER };
  return [`data: ${JSON.stringify(opening)}\n\n`, ...events].join('');
}

/** Azure's error bodies, by status: its own codes, and the API management layer's shape for 401. */
function errorBody(status: number, message: string): string {
  if (status === 401) return JSON.stringify({ error: { code: '401', message: `Access denied due to invalid subscription key or wrong API endpoint. (${message})` } });
  if (status === 429) return JSON.stringify({ error: { code: '429', message: `Requests to the ChatCompletions_Create Operation have exceeded token rate limit. ${message}` } });
  if (status === 400) {
    return JSON.stringify({ error: { message, type: null, param: 'prompt', code: 'content_filter', status: 400, innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: { ...SAFE, violence: { filtered: true, severity: 'medium' } } } } });
  }
  return JSON.stringify({ error: { code: 'InternalServerError', message } });
}

export function azureWire(style: AzureWireStyle): FamilyWire {
  return {
    summarize: (req) => summarize(style, req),
    isStream: (req) => req.json?.stream === true,
    answerJson: (answer, req) => ({ body: answerJson(answer, req) }),
    answerStream: (answer, req) => ({ headers: { 'content-type': 'text/event-stream' }, body: new TextEncoder().encode(answerStream(answer, req)) }),
    errorBody: (status, message) => ({ body: errorBody(status, message) }),
    assertAuth: (req, credential) => {
      assert.equal(req.headers['api-key'], credential, 'Azure takes the key in the api-key header');
      assert.equal(req.headers.authorization, undefined, 'and no Authorization header beside it');
    },
  };
}
