/**
 * The semantic-cache plugin through in-process gateways, on the embedded stores (PGlite, memory KV) and, when
 * TEST_DATABASE_URL and TEST_REDIS_URL are set, on Postgres and Redis: exact hits (same body, upstream called
 * once), streams stored and replayed (as parsed by the official client), either form serving the other, semantic
 * hits on a paraphrase served as a stream, tenants kept apart, parameters in the key, TTL on a moved clock,
 * Cache-Control, what is never stored, usage records at cost 0 with cache_status, budgets not charged, and an
 * embedding provider that fails.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cosineOf } from '../fakes/embedder.ts';
import { recordsOf } from '../helpers/usage.ts';
import {
  admin, ask, chatBody, createKey, DATABASE_URL, REDIS_URL, startFixture, streamed, TTL_SECONDS, type Fixture,
} from '../helpers/semantic-cache.ts';

function cacheSuite(name: string, shared: boolean): void {
  const skip = shared && !(DATABASE_URL && REDIS_URL) ? 'TEST_DATABASE_URL and TEST_REDIS_URL not both set' : false;
  describe(`semantic-cache (${name})`, { skip }, () => {
    let f: Fixture;
    before(async () => {
      f = await startFixture(shared);
    });
    after(async () => {
      await f?.close();
    });

    /** Sends the body twice (the first answer stored in between); returns both answers and the upstream calls made. */
    const twice = async (first: Record<string, unknown>, second = first, options: Parameters<typeof ask>[2] = {}) => {
      const calls = f.chatCalls();
      const a = await ask(f, first, options);
      await f.stored();
      const b = await ask(f, second, options);
      await f.stored();
      return { a, b, upstream: f.chatCalls() - calls };
    };

    test('an identical request is an exact hit: the same body, the upstream called once, X-Cache hit', async () => {
      const { a, b, upstream } = await twice(chatBody('Name three primes.'));
      assert.equal(a.status, 200);
      assert.deepEqual([a.xCache, a.similarity], ['miss', null]);
      assert.deepEqual([b.status, b.xCache, b.similarity], [200, 'hit', '1']);
      assert.deepEqual(b.body, a.body);
      assert.equal(upstream, 1);
    });

    test('a stream is stored and replayed as a stream the official client parses: chunks, usage, [DONE]', async () => {
      const body = chatBody('Count to three.', { stream: true, stream_options: { include_usage: true } });
      const { a, b, upstream } = await twice(body);
      assert.equal(upstream, 1);
      assert.deepEqual([a.xCache, b.xCache], ['miss', 'hit']);
      const live = streamed(a.body);
      const replay = streamed(b.body);
      assert.ok(replay.done, 'the replay ends with [DONE]');
      assert.equal(replay.content, live.content);
      assert.deepEqual(replay.usage, live.usage);

      const before = f.chatCalls();
      const { data, response } = await f.client.chat.completions.create({ ...body, stream: true } as never).withResponse();
      assert.equal(response.headers.get('x-cache'), 'hit');
      let content = '';
      let usage: unknown = null;
      let finish: string | null = null;
      for await (const chunk of data as unknown as AsyncIterable<any>) {
        content += chunk.choices[0]?.delta?.content ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
        if (chunk.usage) usage = chunk.usage;
      }
      assert.equal(content, live.content);
      assert.equal(finish, 'stop');
      assert.deepEqual(usage, live.usage);
      assert.equal(f.chatCalls(), before, 'no upstream call for the client');
    });

    test('a streamed answer serves a later complete request, and a complete answer a later stream', async () => {
      const question = 'Spell the word cat.';
      const streamedFirst = await twice(chatBody(question, { stream: true }), chatBody(question));
      assert.equal(streamedFirst.upstream, 1);
      assert.equal(streamedFirst.b.xCache, 'hit');
      assert.equal(streamedFirst.b.body.choices[0].message.content, streamed(streamedFirst.a.body).content);
      assert.equal(streamedFirst.b.body.choices[0].finish_reason, 'stop');

      const other = 'Spell the word dog.';
      const completeFirst = await twice(chatBody(other), chatBody(other, { stream: true }));
      assert.equal(completeFirst.upstream, 1);
      assert.equal(completeFirst.b.xCache, 'hit');
      const replay = streamed(completeFirst.b.body);
      assert.equal(replay.content, completeFirst.a.body.choices[0].message.content);
      assert.ok(replay.done);
      assert.equal(replay.usage, null, 'a caller who did not ask for usage gets no usage chunk');
    });

    test('a paraphrase is a semantic hit, served as a stream, with its similarity', async () => {
      const original = 'What is the capital city of France?';
      const paraphrase = 'Please tell me: what is the capital city of France?';
      const { a, b, upstream } = await twice(chatBody(original), chatBody(paraphrase, { stream: true }));
      assert.equal(upstream, 1);
      assert.equal(b.xCache, 'semantic-hit');
      assert.equal(b.similarity, cosineOf(`user: ${original}`, `user: ${paraphrase}`).toFixed(4));
      const replay = streamed(b.body);
      assert.ok(replay.done);
      assert.equal(replay.content, a.body.choices[0].message.content);

      const germany = await ask(f, chatBody('What is the capital city of Germany?'));
      assert.equal(germany.xCache, 'miss', 'below the threshold: a miss');
      const otherInstructions = await ask(f, { ...chatBody(original), messages: [{ role: 'system', content: 'Answer in French.' }, { role: 'user', content: original }] });
      assert.equal(otherInstructions.xCache, 'miss', 'other instructions: another partition');
      await f.stored();
    });

    test('another tenant\'s identical or similar request is a miss', async () => {
      await admin(f.gw, '/tenants', { id: 'other', name: 'Other' });
      const otherKey = await createKey(f.gw, { tenantId: 'other' });
      const body = chatBody('Which planet is the largest?');
      const mine = await twice(body, chatBody('Please, which planet is largest?'));
      assert.deepEqual([mine.a.xCache, mine.b.xCache, mine.upstream], ['miss', 'semantic-hit', 1]);
      const theirs = await twice(body, body, { key: otherKey });
      assert.deepEqual([theirs.a.xCache, theirs.b.xCache, theirs.upstream], ['miss', 'hit', 1]);
      assert.notEqual(theirs.a.body.choices[0].message.content, mine.a.body.choices[0].message.content);
      const similar = await ask(f, chatBody('Please, which planet is largest?'), { key: otherKey });
      assert.equal(similar.xCache, 'semantic-hit', 'their own entry');
      assert.equal(similar.body.choices[0].message.content, theirs.a.body.choices[0].message.content);
    });

    test('a different parameter is a miss; parameters that do not change the answer are not in the key', async () => {
      const { b, upstream } = await twice(chatBody('Say something.', { temperature: 0 }), chatBody('Say something.', { temperature: 1 }));
      assert.equal(b.xCache, 'miss');
      assert.equal(upstream, 2);
      const same = await ask(f, chatBody('Say something.', { temperature: 1, user: 'someone-else', metadata: { tag: 'x' } }));
      assert.equal(same.xCache, 'hit');
    });

    test('an entry expires after ttlSeconds (on the gateway\'s clock)', async () => {
      const body = chatBody('What time is it?');
      const { b } = await twice(body);
      assert.equal(b.xCache, 'hit');
      f.advance(TTL_SECONDS * 1000 + 1);
      const later = await ask(f, body);
      assert.equal(later.xCache, 'miss');
      await f.stored();
      assert.equal((await ask(f, body)).xCache, 'hit', 'stored again');
    });

    test('Cache-Control: no-store neither reads nor stores; no-cache does not read, and stores', async () => {
      const noStore = await twice(chatBody('Keep this private.'), chatBody('Keep this private.'), { headers: { 'cache-control': 'no-store' } });
      assert.deepEqual([noStore.a.xCache, noStore.b.xCache, noStore.upstream], ['miss', 'miss', 2]);
      assert.equal((await ask(f, chatBody('Keep this private.'))).xCache, 'miss', 'nothing was stored');

      const noCache = await twice(chatBody('Fresh please.'), chatBody('Fresh please.'), { headers: { 'cache-control': 'No-Cache' } });
      assert.deepEqual([noCache.a.xCache, noCache.b.xCache, noCache.upstream], ['miss', 'miss', 2]);
      assert.equal((await ask(f, chatBody('Fresh please.'))).xCache, 'hit', 'the no-cache answer was stored');
    });

    test('tool-call answers and upstream errors are not stored', async () => {
      const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }];
      const toolCalls = await twice(chatBody('What is the weather?', { tools }));
      assert.deepEqual([toolCalls.a.xCache, toolCalls.b.xCache, toolCalls.upstream], ['miss', 'miss', 2]);
      assert.equal(toolCalls.b.body.choices[0].finish_reason, 'tool_calls');

      const failing = await twice(chatBody('Now please fail.'));
      assert.deepEqual([failing.a.status, failing.b.status], [502, 502]);
      assert.equal(failing.upstream, 2);
    });

    test('usage records a hit at cost 0 with cache_status; budgets are not charged for it', async () => {
      await admin(f.gw, '/budgets', { tenantId: 'default', scope: 'deployment', period: 'daily', limitUsd: 100 });
      const spent = async () => {
        const response = await fetch(`${f.gw.url}/v1/budget`, { headers: { authorization: `Bearer ${f.key}` } });
        return ((await response.json()) as any).data[0].spent_usd as number;
      };
      const body = chatBody('How far is the moon?');
      const miss = await ask(f, body);
      await f.stored();
      const afterMiss = await spent();
      assert.ok(afterMiss > 0);
      const hit = await ask(f, body);
      const semantic = await ask(f, chatBody('How far away is the moon?', { stream: true }));
      assert.deepEqual([hit.xCache, semantic.xCache], ['hit', 'semantic-hit']);
      await f.stored();
      assert.equal(await spent(), afterMiss, 'hits cost nothing (the embedding model is unpriced)');

      const [missRow] = await recordsOf(f.gw, miss.requestId);
      const [hitRow] = await recordsOf(f.gw, hit.requestId);
      const [semanticRow] = await recordsOf(f.gw, semantic.requestId);
      assert.equal(missRow!.cache_status, null);
      assert.ok(Number(missRow!.cost_usd) > 0);
      assert.deepEqual([hitRow!.cache_status, Number(hitRow!.cost_usd), hitRow!.provider, hitRow!.status], ['hit', 0, null, 'completed']);
      assert.deepEqual([Number(hitRow!.prompt_tokens), Number(hitRow!.completion_tokens)], [9, 7], 'the tokens of the stored answer');
      assert.deepEqual([semanticRow!.cache_status, Number(semanticRow!.cost_usd), semanticRow!.stream], ['semantic-hit', 0, true]);
      assert.equal(hitRow!.retrieval, null);
    });

    test('the Messages and legacy completions endpoints are cached in their own formats', async () => {
      const messages = { model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'Messages say hi.' }] };
      const m = await twice(messages, messages, { path: '/v1/messages' });
      assert.deepEqual([m.a.xCache, m.b.xCache, m.upstream], ['miss', 'hit', 1]);
      assert.equal(m.b.body.type, 'message');
      assert.deepEqual(m.b.body.content, m.a.body.content);
      const mStream = await ask(f, { ...messages, stream: true }, { path: '/v1/messages' });
      assert.equal(mStream.xCache, 'hit');
      const messageEvents = (mStream.body as string).split('\n\n').filter((e) => e.includes('data: ')).map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)));
      assert.deepEqual([messageEvents[0].type, messageEvents.at(-1).type], ['message_start', 'message_stop']);
      const text = messageEvents.filter((e) => e.type === 'content_block_delta').map((e) => e.delta.text).join('');
      assert.equal(text, m.a.body.content[0].text);

      const legacy = { model: 'gpt-4o-mini', prompt: 'Legacy says hi.', max_tokens: 20 };
      const l = await twice(legacy, { ...legacy, stream: true }, { path: '/v1/completions' });
      assert.deepEqual([l.a.xCache, l.b.xCache, l.upstream], ['miss', 'hit', 1]);
      const events = (l.b.body as string).split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)));
      assert.ok(events.every((e) => e.object === 'text_completion'));
      assert.equal(events.map((e) => e.choices[0]?.text ?? '').join(''), l.a.body.choices[0].text);
      assert.equal(l.a.body.choices[0].text, `Answer ${f.chatCalls()} to: Legacy says hi.`);
    });

    test('an embedding provider that fails never fails the request: a miss, then exact hits still work', async () => {
      f.failEmbeddings = true;
      try {
        const { a, b, upstream } = await twice(chatBody('Embeddings are down, answer anyway.'));
        assert.deepEqual([a.status, a.xCache, b.xCache, upstream], [200, 'miss', 'hit', 1]);
        const paraphrase = await ask(f, chatBody('Embeddings are down, answer anyway please.'));
        assert.deepEqual([paraphrase.status, paraphrase.xCache], [200, 'miss']);
      } finally {
        f.failEmbeddings = false;
        await f.stored();
      }
    });
  });
}

cacheSuite('embedded stores', false);
cacheSuite('Postgres and Redis', true);
