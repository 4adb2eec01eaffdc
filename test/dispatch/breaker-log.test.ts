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
