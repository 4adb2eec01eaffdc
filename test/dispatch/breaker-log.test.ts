/** Every change of a breaker's state is one log line, so an operator sees an upstream fail and recover. */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { pino } from 'pino';
import { Breakers } from '../../core/dispatch/breakers.ts';
import { GatewayError } from '../../core/errors.ts';

test('a breaker logs when it opens, half-opens and closes', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({ write(text, _enc, done) { lines.push(JSON.parse(String(text))); done(); } });
  const breakers = new Breakers({ errorThresholdPercentage: 50, volumeThreshold: 2, rollingCountTimeoutMs: 10_000, resetTimeoutMs: 50 }, pino({ level: 'info' }, sink));
  const failing = () => Promise.reject(new GatewayError('UPSTREAM_ERROR', 'boom'));
  try {
    for (let i = 0; i < 2; i++) await breakers.run('acme', 'http://upstream.test', failing).catch(() => {});
    await assert.rejects(breakers.run('acme', 'http://upstream.test', () => Promise.resolve('never')), { code: 'UPSTREAM_UNAVAILABLE' });
    const opened = lines.find((line) => String(line.msg).startsWith('circuit breaker opened'));
    assert.ok(opened, 'opened is logged');
    assert.equal(opened.level, 40);
    assert.deepEqual([opened.provider, opened.baseUrl], ['acme', 'http://upstream.test']);
    await new Promise((resolve) => setTimeout(resolve, 60)); // the breaker's own reset timer, not a guess at our code
    assert.equal(await breakers.run('acme', 'http://upstream.test', () => Promise.resolve('ok')), 'ok');
    const messages = lines.map((line) => String(line.msg).split(':')[0]);
    assert.deepEqual(messages, ['circuit breaker opened', 'circuit breaker half-open', 'circuit breaker closed']);
  } finally {
    breakers.shutdown();
  }
});

test('a failure found after the call (a streamed body that broke midway) counts against the breaker; a caller\'s abort does not', async () => {
  const breakers = new Breakers({ errorThresholdPercentage: 50, volumeThreshold: 2, rollingCountTimeoutMs: 10_000, resetTimeoutMs: 10_000 });
  try {
    await breakers.run('acme', 'http://upstream.test', () => Promise.resolve('headers arrived'));
    breakers.countFailure('acme', 'http://upstream.test', Object.assign(new Error('aborted'), { name: 'AbortError' }));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(breakers.states()[0]!.failures, 0, 'an abort is not the upstream\'s failure');
    for (let i = 0; i < 3; i++) breakers.countFailure('acme', 'http://upstream.test', new GatewayError('UPSTREAM_ERROR', 'acme could not be reached while streaming'));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(breakers.states()[0]!.failures, 3);
    await assert.rejects(breakers.run('acme', 'http://upstream.test', () => Promise.resolve('never')), { code: 'UPSTREAM_UNAVAILABLE' });
  } finally {
    breakers.shutdown();
  }
});
