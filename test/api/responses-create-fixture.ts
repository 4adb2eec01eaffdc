/**
 * A gateway for the POST /v1/responses tests: the OpenAI chat fake and an Anthropic Messages fake (the
 * conformance kit's wire), models on each and one served by both (anthropic first), and a responses pipeline
 * with auth and usage. The Anthropic fake answers what `anthropic.answer` says, streaming or not.
 */
import type { ServerResponse } from 'node:http';
import { messagesAnswer, messagesStreamEvents } from '../conformance/wires/anthropic.ts';
import type { ScriptedAnswer } from '../conformance/fixtures.ts';
import type { RecordedUpstreamRequest } from '../conformance/kit.ts';
import { startRecordingServer } from '../conformance/recording-server.ts';
import { writeSplit } from '../fakes/openai.ts';

export interface FakeAnthropic {
  url: string;
  requests: RecordedUpstreamRequest[];
  answer: ScriptedAnswer;
  /** Replaces the scripted answer for the next requests (a stream that hangs, an error). */
  handle?: (req: RecordedUpstreamRequest, res: ServerResponse) => void | Promise<void>;
  close(): Promise<void>;
}

export const hello = (text = 'Hello from Claude'): ScriptedAnswer => ({ text, toolCalls: [], finish: 'stop', usage: { prompt: 12, completion: 4 } });

export async function startFakeAnthropic(): Promise<FakeAnthropic> {
  const fake: Pick<FakeAnthropic, 'answer' | 'handle'> = { answer: hello() };
  const server = await startRecordingServer(undefined, async (req, res) => {
    if (fake.handle) return fake.handle(req, res);
    if (req.json?.stream === true) return writeSplit(res, messagesStreamEvents(fake.answer, req.json), 1);
    res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_fake' });
    res.end(JSON.stringify(messagesAnswer(fake.answer, req.json)));
  });
  return Object.assign(fake, server);
}

export function responsesConfig(openaiBaseUrl: string, anthropicUrl: string): string {
  return `
providers:
  openai:
    baseUrl: ${openaiBaseUrl}
    apiKey: sk-upstream-secret
    # The chat fake has no Responses API: these tests cover the chat path (responses-native*.test.ts the native one).
    options: { nativeResponses: false }
  anthropic:
    baseUrl: ${anthropicUrl}/v1
    apiKey: sk-ant-fake
models:
  - id: gpt-4o-mini
    provider: openai
    upstreamModel: gpt-4o-mini-2024-07-18
  - id: claude
    provider: anthropic
    upstreamModel: claude-sonnet-4-5
  - id: both
    targets: [{ provider: anthropic, upstreamModel: claude-sonnet-4-5 }, { provider: openai, upstreamModel: gpt-4o-mini-2024-07-18 }]
routing:
  retries: 0
upstream:
  breaker:
    volumeThreshold: 1000
pipelines:
  - name: responses
    routes: [/v1/responses]
    plugins: [auth, usage]
`;
}
