/**
 * The Responses mappings on their own: input items and stored turns -> chat messages, the create body's
 * parameters -> chat's, a chat answer -> output items, and canonical chunks -> stream events (the chunks decoded
 * from bytes split at every offset).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatCompletion, ChatCompletionChunk } from '../../core/canonical/chat.ts';
import { conversationMessages, inputItems, outputItemsOf, responsesUsage, type InputItem } from '../../core/canonical/responses.ts';
import { chatBodyOf } from '../../core/canonical/responses-request.ts';
import { OutputAssembler, type ResponsesEvent } from '../../core/canonical/responses-stream.ts';
import type { ValidationIssue } from '../../core/errors.ts';
import { BUILT_IN_ALIASES } from '../../core/ingress/schemas/responses.ts';
import { decodeStream } from '../../core/streaming/decode.ts';

const FILE = 'file-0b7e5c1a-1111-4222-8333-444455556666';

describe('input items -> chat messages', () => {
  test('messages of every role and part, function calls joined to their assistant turn, outputs as tool messages', () => {
    const items: InputItem[] = [
      { role: 'developer', content: 'Be terse.' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Look:' }, { type: 'input_image', image_url: 'https://example.test/a.png', detail: 'low' }, { type: 'input_file', file_id: FILE }] },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Checking ' }, { type: 'output_text', text: 'both.' }] },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      { type: 'function_call', call_id: 'c2', name: 'g', arguments: '{"a":1}' },
      { type: 'function_call_output', call_id: 'c1', output: 'one' },
      { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'two' }] },
      { type: 'reasoning', summary: [] },
      { role: 'user', content: [{ type: 'input_image', file_id: FILE }] },
    ];
    const issues: ValidationIssue[] = [];
    const messages = conversationMessages([], 'Instructions.', items, issues);
    assert.deepEqual(issues, []);
    assert.deepEqual(messages, [
      { role: 'system', content: 'Instructions.' },
      { role: 'developer', content: 'Be terse.' },
      { role: 'user', content: [{ type: 'text', text: 'Look:' }, { type: 'image_url', image_url: { url: 'https://example.test/a.png', detail: 'low' } }, { type: 'file', file: { file_id: FILE } }] },
      { role: 'assistant', content: 'Checking both.', tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } },
        { id: 'c2', type: 'function', function: { name: 'g', arguments: '{"a":1}' } },
      ] },
      { role: 'tool', tool_call_id: 'c1', content: 'one' },
      { role: 'tool', tool_call_id: 'c2', content: 'two' },
      { role: 'user', content: [{ type: 'file', file: { file_id: FILE } }] },
    ]);
  });

  test('a chain: each turn\'s input then output, oldest first, its instructions left out; this turn\'s instructions first', () => {
    const turns = [
      { input: inputItems('one'), output: [{ id: 'rs_1', type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'hmm' }] }, { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'first', annotations: [] }] }] },
      { input: inputItems('two'), output: [{ id: 'fc_1', type: 'function_call', call_id: 'c', name: 'f', arguments: '{}', status: 'completed' }] },
    ];
    const messages = conversationMessages(turns, 'Now.', [{ type: 'function_call_output', call_id: 'c', output: 'ok' }], []);
    assert.deepEqual(messages, [
      { role: 'system', content: 'Now.' },
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'first' },
      { role: 'user', content: 'two' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c', content: 'ok' },
    ]);
  });

  test('item_reference and non-text parts on assistant turns are refused with their paths', () => {
    const issues: ValidationIssue[] = [];
    conversationMessages([], null, [{ type: 'item_reference', id: 'msg_1' }, { role: 'assistant', content: [{ type: 'input_file', file_id: FILE }] }], issues);
    assert.deepEqual(issues.map((i) => i.path), ['/input/0/type', '/input/1/content/0/type']);
  });
});

describe('create parameters -> chat', () => {
  test('tools (function and built-ins, OpenAI aliases), tool_choice, sampling, max_output_tokens, reasoning', () => {
    const body = chatBodyOf({
      model: 'm', input: 'x', stream: true, temperature: 0.2, top_p: 0.5, max_output_tokens: 10, reasoning: { budget_tokens: 2048 }, tool_choice: 'required',
      tools: [
        { type: 'function', name: 'f', description: null, parameters: { type: 'object' }, strict: true },
        { type: 'file_search', vector_store_ids: ['vs_1'], max_num_results: 3 },
        { type: 'web_search_preview', search_context_size: 'low' },
        { type: 'code_interpreter' },
      ],
    }, [], BUILT_IN_ALIASES);
    assert.deepEqual(body, {
      model: 'm', messages: [], stream: true, temperature: 0.2, top_p: 0.5, max_tokens: 10, reasoning: { budget_tokens: 2048 }, tool_choice: 'required',
      tools: [
        { type: 'function', function: { name: 'f', parameters: { type: 'object' } } },
        { type: 'built_in', built_in: 'file_search', config: { vectorStoreIds: ['vs_1'], topK: 3 } },
        { type: 'built_in', built_in: 'web_search', config: { search_context_size: 'low' } },
        { type: 'built_in', built_in: 'code_execution' },
      ],
    });
    assert.deepEqual(chatBodyOf({ model: 'm', input: 'x', reasoning: { effort: 'high' }, tool_choice: { type: 'function', name: 'f' } }, [], BUILT_IN_ALIASES),
      { model: 'm', messages: [], reasoning: { effort: 'high' }, tool_choice: { type: 'function', function: { name: 'f' } } });
  });
});

describe('chat answer -> output items', () => {
  const answer = (message: Record<string, unknown>, finish: string): ChatCompletion => ({
    id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: finish as 'stop' }],
  });

  test('reasoning, text and calls, in that order; a length cut leaves items incomplete', () => {
    const items = outputItemsOf(answer({ content: 'Hi', reasoning_content: 'think', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }, 'tool_calls'));
    assert.deepEqual(items.map((i) => i.type), ['reasoning', 'message', 'function_call']);
    assert.deepEqual((items[0] as { content: unknown }).content, [{ type: 'reasoning_text', text: 'think' }]);
    assert.deepEqual(outputItemsOf(answer({ content: 'Hel' }, 'length')).map((i) => i.status), ['incomplete']);
    assert.deepEqual(outputItemsOf(answer({ content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '' } }] }, 'tool_calls')).map((i) => i.type), ['function_call']);
  });

  test('usage with its details when reported', () => {
    assert.deepEqual(responsesUsage({ prompt_tokens: 5, completion_tokens: 7, total_tokens: 12, prompt_tokens_details: { cached_tokens: 2 }, completion_tokens_details: { reasoning_tokens: 3 } }),
      { input_tokens: 5, output_tokens: 7, total_tokens: 12, input_tokens_details: { cached_tokens: 2 }, output_tokens_details: { reasoning_tokens: 3 } });
    assert.equal(responsesUsage(undefined), null);
  });
});

describe('chunks -> stream events', () => {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, usage?: unknown): ChatCompletionChunk => ({
    id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish as null }], ...(usage ? { usage } : {}),
  } as ChatCompletionChunk);
  const wire = [
    chunk({ role: 'assistant', content: '' }),
    chunk({ reasoning_content: 'Hmm. ' }),
    chunk({ content: 'Héllo ' }),
    chunk({ content: 'wörld' }),
    chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a"' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }),
    chunk({}, 'tool_calls'),
    { ...chunk({}), choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } },
  ];
  const bytes = Buffer.from(wire.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('') + 'data: [DONE]\n\n');

  async function* split(at: number) {
    yield bytes.subarray(0, at);
    yield bytes.subarray(at);
  }

  async function eventsOf(at: number): Promise<{ events: ResponsesEvent[]; assembler: OutputAssembler }> {
    const assembler = new OutputAssembler();
    const events: ResponsesEvent[] = [];
    for await (const frame of decodeStream('sse', split(at), 1 << 20)) {
      if (frame.data === '[DONE]') break;
      events.push(...assembler.push(JSON.parse(frame.data) as ChatCompletionChunk));
    }
    events.push(...assembler.close('completed'));
    return { events, assembler };
  }

  test('the same events wherever the bytes are split', async () => {
    const { events: reference, assembler } = await eventsOf(bytes.length);
    const strip = (events: ResponsesEvent[]) => JSON.stringify(events).replace(/"(msg|fc|rs)_[0-9a-f]{32}"/g, '"id"');
    for (let at = 1; at < bytes.length; at += 7) assert.equal(strip((await eventsOf(at)).events), strip(reference), `split at ${at}`);

    assert.deepEqual(reference.map((e) => e.type), [
      'response.output_item.added', 'response.reasoning_text.delta',
      'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.delta',
      'response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.delta',
      'response.reasoning_text.done', 'response.output_item.done',
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done',
      'response.function_call_arguments.done', 'response.output_item.done',
    ]);
    const output = assembler.output();
    assert.deepEqual(output.map((i) => i.status), ['completed', 'completed', 'completed']);
    assert.equal((output[1] as { content: Array<{ text: string }> }).content[0]!.text, 'Héllo wörld');
    assert.equal((output[2] as { arguments: string }).arguments, '{"a":1}');
    assert.equal(assembler.finishReason, 'tool_calls');
    assert.deepEqual(assembler.usage, { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    assert.equal(assembler.upstreamId, 'chatcmpl-9');
  });
});
