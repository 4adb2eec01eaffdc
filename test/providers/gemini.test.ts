/**
 * The Gemini translator where the conformance kit does not reach: tool results, safety and blocked prompts,
 * thinking, built-in tools, thought signatures, images, candidates, logprobs and stream edge cases.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../../core/canonical/chat.ts';
import { chatTranslatorFor } from '../../core/dispatch/chat-call.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import gemini from '../../providers/gemini/index.ts';
import { gatewayError } from '../helpers/failures.ts';

const chat = gemini.chat!;
const target = (upstreamModel = 'gemini-2.5-flash'): ProviderTarget => ({
  slug: 'gemini', baseUrl: 'https://generativelanguage.googleapis.com/v1beta', apiKey: 'AIza-test', headers: {}, options: {}, upstreamModel,
});
const req = (fields: Partial<ChatCompletionRequest>): ChatCompletionRequest => ({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...fields });
const body = (request: ChatCompletionRequest, model?: string): any => JSON.parse(chat.toUpstream(request, target(model), false).body!);

/** Decodes a list of GenerateContentResponse objects as one stream. */
function decode(events: unknown[], request = req({})): ChatCompletionChunk[] {
  const decoder = chat.streamDecoder(target(), request);
  const chunks: ChatCompletionChunk[] = [];
  for (const e of events) chunks.push(...decoder.event({ event: 'message', data: JSON.stringify(e) }).chunks);
  chunks.push(...decoder.end());
  return chunks;
}

const stop = (parts: unknown[], finishReason = 'STOP') => ({ candidates: [{ content: { role: 'model', parts }, finishReason, index: 0 }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 3 } });

describe('gemini: the request', () => {
  test('the URL names the model and the method; the key is a header, never the caller\'s credential', () => {
    const plain = chat.toUpstream(req({}), target(), false);
    assert.equal(plain.path, '/models/gemini-2.5-flash:generateContent');
    assert.equal(plain.headers['x-goog-api-key'], 'AIza-test');
    assert.equal(plain.headers.authorization, undefined);
    assert.equal(chat.toUpstream(req({}), target(), true).path, '/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    assert.equal(chat.toUpstream(req({}), target('tunedModels/my-tune'), false).path, '/tunedModels/my-tune:generateContent');
    assert.equal(body(req({})).model, undefined, 'the model is in the URL only');
  });

  test('tool results: the function name comes from the earlier call; non-object results are wrapped', () => {
    const call = (id: string, name: string) => ({ id, type: 'function' as const, function: { name, arguments: '{}' } });
    const sent = body(req({
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, tool_calls: [call('c1', 'get_weather'), call('c2', 'get_time'), call('c3', 'lookup'), call('c4', 'list')] },
        { role: 'tool', tool_call_id: 'c1', content: '{"temp":21}' },
        { role: 'tool', tool_call_id: 'c2', content: 'noon' },
        { role: 'tool', tool_call_id: 'c3', content: '42' },
        { role: 'tool', tool_call_id: 'c4', content: [{ type: 'text', text: '[1,2]' }] },
        { role: 'user', content: 'and now?' },
      ],
    }));
    // Tool results and the next user message are one user turn: Gemini alternates user and model turns.
    assert.equal(sent.contents.length, 3);
    assert.deepEqual(sent.contents[2], {
      role: 'user',
      parts: [
        { functionResponse: { name: 'get_weather', response: { temp: 21 } } },
        { functionResponse: { name: 'get_time', response: { content: 'noon' } } },
        { functionResponse: { name: 'lookup', response: { content: 42 } } },
        { functionResponse: { name: 'list', response: { content: [1, 2] } } },
        { text: 'and now?' },
      ],
    });
    assert.deepEqual(sent.contents[1].parts.map((p: any) => p.functionCall.name), ['get_weather', 'get_time', 'lookup', 'list']);
  });

  test('a tool result that answers no earlier call is refused with 400 VALIDATION_ERROR', () => {
    const err = gatewayError(() => body(req({ messages: [{ role: 'user', content: 'x' }, { role: 'tool', tool_call_id: 'nope', content: '1' }] })));
    assert.equal(err.code, 'VALIDATION_ERROR');
    assert.equal((err.details as Array<{ path: string }>)[0]!.path, '/messages/1/tool_call_id');
  });

  test('system and developer messages become systemInstruction; consecutive user messages are merged', () => {
    const sent = body(req({ messages: [{ role: 'system', content: 'Be terse.' }, { role: 'developer', content: 'Use French.' }, { role: 'user', content: 'a' }, { role: 'user', content: 'b' }] }));
    assert.deepEqual(sent.systemInstruction, { parts: [{ text: 'Be terse.' }, { text: 'Use French.' }] });
    assert.deepEqual(sent.contents, [{ role: 'user', parts: [{ text: 'a' }, { text: 'b' }] }]);
  });

  test('images: data URLs inline, http(s) and gs:// URLs as fileData with a MIME type, others refused', () => {
    const image = (url: string) => req({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }] });
    assert.deepEqual(body(image('data:image/png;base64,AAAA')).contents[0].parts, [{ inlineData: { mimeType: 'image/png', data: 'AAAA' } }]);
    assert.deepEqual(body(image('https://example.com/cat.webp?size=2')).contents[0].parts, [{ fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/cat.webp?size=2' } }]);
    assert.deepEqual(body(image('gs://bucket/photo')).contents[0].parts, [{ fileData: { mimeType: 'image/jpeg', fileUri: 'gs://bucket/photo' } }]);
    assert.equal(gatewayError(() => body(image('ftp://example.com/x.png'))).code, 'VALIDATION_ERROR');
  });

  test('generationConfig: n, stop, penalties, seed, json_object, json_schema (the name as its title)', () => {
    const config = body(req({
      n: 3, stop: 'END', top_p: 0.5, max_completion_tokens: 99, seed: 7, presence_penalty: 0.1, frequency_penalty: 0.2,
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object', properties: { n: { type: 'integer' } } } } },
    })).generationConfig;
    assert.deepEqual(config, {
      topP: 0.5, maxOutputTokens: 99, stopSequences: ['END'], candidateCount: 3, seed: 7, presencePenalty: 0.1, frequencyPenalty: 0.2,
      responseMimeType: 'application/json', responseJsonSchema: { title: 'answer', type: 'object', properties: { n: { type: 'integer' } } },
    });
    assert.deepEqual(body(req({ response_format: { type: 'json_object' } })).generationConfig, { responseMimeType: 'application/json' });
  });

  test('tools: JSON Schema parameters as is; tool_choice none / required / named', () => {
    const tool = { type: 'function' as const, function: { name: 'f', description: 'd', parameters: { type: 'object', additionalProperties: false } } };
    const sent = body(req({ tools: [tool], tool_choice: 'none' }));
    assert.deepEqual(sent.tools, [{ functionDeclarations: [{ name: 'f', description: 'd', parametersJsonSchema: { type: 'object', additionalProperties: false } }] }]);
    assert.deepEqual(sent.toolConfig, { functionCallingConfig: { mode: 'NONE' } });
    assert.deepEqual(body(req({ tools: [tool], tool_choice: 'required' })).toolConfig, { functionCallingConfig: { mode: 'ANY' } });
    assert.deepEqual(body(req({ tools: [tool], tool_choice: { type: 'function', function: { name: 'f' } } })).toolConfig, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] } });
    assert.equal(body(req({ tools: [tool] })).toolConfig, undefined);
  });

  test('logit_bias has no Gemini equivalent: 400 CAPABILITY_NOT_SUPPORTED before any I/O', () => {
    assert.equal(gatewayError(() => body(req({ logit_bias: { '50256': -100 } }))).code, 'CAPABILITY_NOT_SUPPORTED');
  });
});

describe('gemini: thinking', () => {
  test('reasoning_effort is a thinking budget on Gemini 2.x and a thinking level on later models', () => {
    assert.deepEqual(body(req({ reasoning_effort: 'low' }), 'gemini-2.5-pro').generationConfig.thinkingConfig, { thinkingBudget: 1024, includeThoughts: true });
    assert.deepEqual(body(req({ reasoning_effort: 'high' }), 'gemini-3-pro-preview').generationConfig.thinkingConfig, { thinkingLevel: 'high', includeThoughts: true });
  });

  test('budget_tokens is the thinking budget; exclude_from_output asks for no thought summaries', () => {
    assert.deepEqual(body(req({ reasoning: { budget_tokens: 0 } })).generationConfig.thinkingConfig, { thinkingBudget: 0, includeThoughts: true });
    assert.deepEqual(body(req({ reasoning: { effort: 'medium', budget_tokens: 2048, exclude_from_output: true } })).generationConfig.thinkingConfig, { thinkingBudget: 2048, includeThoughts: false });
    assert.equal(body(req({})).generationConfig, undefined);
  });

  test('thought parts are reasoning_content, never content; thoughts count as reasoning tokens', () => {
    const answer = {
      candidates: [{ content: { role: 'model', parts: [{ text: 'Let me think.', thought: true }, { text: 'Four.' }] }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 2, thoughtsTokenCount: 30, cachedContentTokenCount: 4 },
    };
    const completion = chat.fromUpstream(answer, target(), req({}));
    const message = completion.choices[0]!.message as { content: string | null; reasoning_content?: string };
    assert.equal(message.content, 'Four.');
    assert.equal(message.reasoning_content, 'Let me think.');
    assert.deepEqual(completion.usage, {
      prompt_tokens: 10, completion_tokens: 32, total_tokens: 42,
      prompt_tokens_details: { cached_tokens: 4 }, completion_tokens_details: { reasoning_tokens: 30 },
    });
    const streamed = decode([{ candidates: [{ content: { parts: [{ text: 'Hmm.', thought: true }] } }] }, stop([{ text: 'Four.' }])]);
    assert.equal(streamed.map((c) => (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '').join(''), 'Hmm.');
    assert.equal(streamed.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'Four.');
  });

  test('a thoughtSignature travels in the tool-call id and comes back on the function call', () => {
    const signature = Buffer.from('opaque signature bytes \u00ff\u00fe').toString('base64');
    const completion = chat.fromUpstream(stop([{ functionCall: { name: 'f', args: { a: 1 } }, thoughtSignature: signature }, { functionCall: { name: 'g', args: {} } }]), target(), req({}));
    const calls = completion.choices[0]!.message.tool_calls!;
    assert.equal(completion.choices[0]!.finish_reason, 'tool_calls');
    assert.match(calls[0]!.id, /^[A-Za-z0-9_-]+$/, 'an id every provider accepts');
    const sent = body(req({
      messages: [{ role: 'user', content: 'go' }, { role: 'assistant', content: null, tool_calls: calls }, { role: 'tool', tool_call_id: calls[0]!.id, content: '{}' }, { role: 'tool', tool_call_id: calls[1]!.id, content: '{}' }],
    }));
    assert.deepEqual(sent.contents[1].parts, [
      { functionCall: { name: 'f', args: { a: 1 } }, thoughtSignature: signature },
      { functionCall: { name: 'g', args: {} } },
    ]);
  });
});

describe('gemini: finish reasons', () => {
  test('SAFETY and the other filters are content_filter; MAX_TOKENS is length; STOP after calls is tool_calls', () => {
    for (const reason of ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII']) {
      assert.equal(chat.fromUpstream(stop([], reason), target(), req({})).choices[0]!.finish_reason, 'content_filter', reason);
      assert.equal(decode([stop([{ text: 'par' }], reason)]).find((c) => c.choices[0]?.finish_reason)?.choices[0]!.finish_reason, 'content_filter', `${reason}, streaming`);
    }
    assert.equal(chat.fromUpstream(stop([{ text: 'cut' }], 'MAX_TOKENS'), target(), req({})).choices[0]!.finish_reason, 'length');
  });

  test('a blocked prompt (no candidates, promptFeedback.blockReason) is an empty content_filter answer', () => {
    const blocked = { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 8 } };
    const completion = chat.fromUpstream(blocked, target(), req({}));
    assert.deepEqual(completion.choices, [{ index: 0, message: { role: 'assistant', content: null }, finish_reason: 'content_filter' }]);
    const chunks = decode([blocked]);
    assert.equal(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0]!.finish_reason, 'content_filter');
    assert.equal(chunks.at(-1)!.usage?.prompt_tokens, 8);
  });
});

describe('gemini: built-in tools', () => {
  test('web_search and search_grounding are Google Search grounding; code_execution is codeExecution', () => {
    const builtIn = (name: 'web_search' | 'search_grounding' | 'code_execution') => ({ type: 'built_in' as const, built_in: name });
    assert.deepEqual(body(req({ tools: [builtIn('search_grounding')] })).tools, [{ googleSearch: {} }]);
    assert.deepEqual(body(req({ tools: [builtIn('web_search'), builtIn('search_grounding'), builtIn('code_execution')] })).tools, [{ googleSearch: {} }, { codeExecution: {} }]);
    const fn = { type: 'function' as const, function: { name: 'f' } };
    assert.deepEqual(body(req({ tools: [fn, builtIn('web_search')] })).tools, [{ functionDeclarations: [{ name: 'f' }] }, { googleSearch: {} }]);
  });

  test('computer_use is not declared: the dispatcher refuses it before any I/O', () => {
    const err = gatewayError(() => chatTranslatorFor(gemini, req({ tools: [{ type: 'built_in', built_in: 'computer_use' }] }), false));
    assert.equal(err.code, 'CAPABILITY_NOT_SUPPORTED');
  });

  test('code the model ran, and its output, are part of the text', () => {
    const completion = chat.fromUpstream(stop([
      { text: 'Computing.' },
      { executableCode: { language: 'PYTHON', code: 'print(2+2)' } },
      { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '4\n' } },
    ]), target(), req({}));
    assert.equal(completion.choices[0]!.message.content, 'Computing.\n```python\nprint(2+2)\n```\n\n```output\n4\n\n```\n');
  });
});

describe('gemini: candidates, logprobs and streams', () => {
  test('every candidate is a choice (n), streamed by candidate index', () => {
    const two = {
      candidates: [
        { index: 0, content: { parts: [{ text: 'A' }] }, finishReason: 'STOP' },
        { index: 1, content: { parts: [{ functionCall: { name: 'f', args: {} } }] }, finishReason: 'STOP' },
      ],
      usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 2 },
    };
    const completion = chat.fromUpstream(two, target(), req({ n: 2 }));
    assert.deepEqual(completion.choices.map((c) => [c.index, c.message.content, c.finish_reason]), [[0, 'A', 'stop'], [1, null, 'tool_calls']]);
    const chunks = decode([two]);
    assert.deepEqual(chunks.flatMap((c) => c.choices.filter((x) => x.finish_reason).map((x) => [x.index, x.finish_reason])), [[0, 'stop'], [1, 'tool_calls']]);
    assert.equal(chunks.at(-1)!.choices.length, 0, 'usage comes last, in a chunk of its own');
    assert.equal(chunks.at(-1)!.usage?.completion_tokens, 2);
  });

  test('logprobs: asked for with responseLogprobs, returned in OpenAI\'s shape', () => {
    assert.deepEqual(body(req({ logprobs: true, top_logprobs: 2 })).generationConfig, { responseLogprobs: true, logprobs: 2 });
    const answer = {
      candidates: [{
        content: { parts: [{ text: 'Hi' }] }, finishReason: 'STOP',
        logprobsResult: { chosenCandidates: [{ token: 'Hi', logProbability: -0.1 }], topCandidates: [{ candidates: [{ token: 'Hi', logProbability: -0.1 }, { token: 'Hey', logProbability: -2.5 }] }] },
      }],
    };
    assert.deepEqual(chat.fromUpstream(answer, target(), req({})).choices[0]!.logprobs, {
      content: [{ token: 'Hi', logprob: -0.1, bytes: null, top_logprobs: [{ token: 'Hi', logprob: -0.1, bytes: null }, { token: 'Hey', logprob: -2.5, bytes: null }] }],
    });
  });

  test('an error event inside the stream is the caller\'s error, mapped by its code', () => {
    const decoder = chat.streamDecoder(target(), req({}));
    const err = gatewayError(() => decoder.event({ event: 'message', data: JSON.stringify({ error: { code: 429, message: 'Resource exhausted', status: 'RESOURCE_EXHAUSTED' } }) }));
    assert.equal(err.code, 'UPSTREAM_RATE_LIMITED');
    assert.match(err.message, /Resource exhausted/);
  });

  test('a stream that ends before a finish reason is an upstream error, not a complete answer', () => {
    const decoder = chat.streamDecoder(target(), req({}));
    decoder.event({ event: 'message', data: JSON.stringify({ candidates: [{ content: { parts: [{ text: 'half' }] } }] }) });
    assert.equal(gatewayError(() => decoder.end()).code, 'UPSTREAM_ERROR');
  });

  test('usage is the last usageMetadata only, even though every event carries one', () => {
    const partial = { promptTokenCount: 5, totalTokenCount: 5 };
    const chunks = decode([
      { candidates: [{ content: { parts: [{ text: 'a' }] } }], usageMetadata: partial },
      { candidates: [{ content: { parts: [{ text: 'b' }] } }], usageMetadata: partial },
      stop([{ text: 'c' }]),
    ]);
    assert.equal(chunks.filter((c) => c.usage).length, 1);
    assert.deepEqual(chunks.at(-1)!.usage, { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 });
  });

  test('errors: {error: {code, message, status}} through the shared status mapping', () => {
    const err = gemini.mapError(400, { error: { code: 400, message: 'Invalid JSON payload', status: 'INVALID_ARGUMENT' } }, target());
    assert.equal(err.code, 'UPSTREAM_BAD_REQUEST');
    assert.match(err.message, /Invalid JSON payload/);
    assert.deepEqual((err.details as { upstreamError: unknown }).upstreamError, { code: 400, message: 'Invalid JSON payload', status: 'INVALID_ARGUMENT' });
    assert.equal(gemini.mapError(403, [{ error: { code: 403, message: 'API key not valid', status: 'PERMISSION_DENIED' } }], target()).code, 'UPSTREAM_ERROR');
  });
});
