/**
 * IBM watsonx.ai's chat wire (cloud.ibm.com/apidocs/watsonx-ai#text-chat): POST /ml/v1/text/chat?version=...
 * and /text/chat_stream with model_id, project_id and OpenAI-shaped messages and tools; tool_choice_option
 * (auto | none | required) or tool_choice (a named function). Answers are OpenAI-shaped plus model_id and
 * created_at; streams are SSE `id: n`, `event: message` chunks, the last one carrying usage, with no [DONE].
 * Plus IBM Cloud IAM's token endpoint, which exchanges the API key for the bearer token.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import type { ScriptedAnswer } from '../fixtures.ts';
import type { FamilyWire, RecordedUpstreamRequest } from '../kit.ts';
import { openAiCompletion, summarizeOpenAiBody } from './openai.ts';

const ID = 'chatcmpl-watsonx-conformance';
const CREATED = 1_750_000_000;

export function summarizeWatsonxRequest(req: RecordedUpstreamRequest) {
  const body = req.json ?? {};
  return summarizeOpenAiBody({
    ...body,
    model: body.model_id,
    stream: req.url.startsWith('/ml/v1/text/chat_stream'),
    tool_choice: body.tool_choice ?? body.tool_choice_option,
  });
}

const usageOf = (answer: ScriptedAnswer) =>
  ({ prompt_tokens: answer.usage.prompt, completion_tokens: answer.usage.completion, total_tokens: answer.usage.prompt + answer.usage.completion });

export function watsonxAnswer(answer: ScriptedAnswer, model: string) {
  const { object: _object, ...openai } = openAiCompletion(answer, model);
  return { ...openai, model_id: model, model_version: '3.3.0', created: CREATED, created_at: '2025-06-15T12:00:00.000Z', id: ID };
}

const pieces = (text: string, size: number) => text.match(new RegExp(`.{1,${size}}`, 'gs')) ?? [];

/** The SSE events watsonx streams: role, text pieces, tool-call fragments, the finish, then a usage-only chunk. */
export function watsonxStreamEvents(answer: ScriptedAnswer, model: string): string[] {
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    ({ id: ID, object: 'chat.completion.chunk', model_id: model, model, choices, created: CREATED, model_version: '3.3.0', created_at: '2025-06-15T12:00:00.000Z', ...extra });
  const delta = (d: Record<string, unknown>, finish: string | null = null) => chunk([{ index: 0, finish_reason: finish, delta: d }]);
  const chunks: unknown[] = [delta({ role: 'assistant', content: '' })];
  for (const content of pieces(answer.text, 4)) chunks.push(delta({ content }));
  answer.toolCalls.forEach((call, index) => {
    chunks.push(delta({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const args of pieces(call.arguments, 5)) chunks.push(delta({ tool_calls: [{ index, function: { arguments: args } }] }));
  });
  chunks.push(delta({ content: '' }, answer.finish));
  chunks.push(chunk([], { usage: usageOf(answer) }));
  return chunks.map((c, i) => `id: ${i + 1}\nevent: message\ndata: ${JSON.stringify(c)}\n\n`);
}

export const watsonxWire: FamilyWire = {
  summarize: summarizeWatsonxRequest,
  isStream: (req) => req.url.startsWith('/ml/v1/text/chat_stream'),
  answerJson: (answer, req) => ({ body: JSON.stringify(watsonxAnswer(answer, req.json?.model_id ?? 'model')) }),
  answerStream: (answer, req) => ({
    headers: { 'content-type': 'text/event-stream' },
    body: new TextEncoder().encode(watsonxStreamEvents(answer, req.json?.model_id ?? 'model').join('')),
  }),
  errorBody: (status, message) => ({
    body: JSON.stringify({ errors: [{ code: status === 429 ? 'rate_limit_exceeded' : 'invalid_request', message, more_info: 'https://cloud.ibm.com/apidocs/watsonx-ai' }], trace: 'trace-conformance', status_code: status }),
  }),
  assertAuth: (req, credential) => {
    assert.match(req.url, /^\/ml\/v1\/text\/chat(_stream)?\?version=\d{4}-\d{2}-\d{2}$/);
    assert.equal(req.headers.authorization, `Bearer ${credential}`);
    assert.ok(req.json.project_id || req.json.space_id, 'a project or space is named');
  },
};

/** A fake IBM Cloud IAM token endpoint: the API key, form-encoded, for an hour-long bearer token. */
export function iamRoute(options: { apiKey: string; token: (n: number) => string; now?: () => number; onExchange?: () => void }) {
  let exchanges = 0;
  return (req: RecordedUpstreamRequest, res: ServerResponse): boolean => {
    if (req.url !== '/identity/token') return false;
    const form = new URLSearchParams(req.rawBody);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST' || !String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')
      || form.get('grant_type') !== 'urn:ibm:params:oauth:grant-type:apikey') {
      json(400, { errorCode: 'BXNIM0109E', errorMessage: 'Property missing or empty. Operation not allowed.' });
      return true;
    }
    if (form.get('apikey') !== options.apiKey) {
      json(400, { errorCode: 'BXNIM0415E', errorMessage: 'Provided API key could not be found.' });
      return true;
    }
    exchanges++;
    options.onExchange?.();
    const now = Math.floor((options.now?.() ?? Date.now()) / 1000);
    json(200, { access_token: options.token(exchanges), refresh_token: 'not_supported', token_type: 'Bearer', expires_in: 3600, expiration: now + 3600, scope: 'ibm openid' });
    return true;
  };
}
