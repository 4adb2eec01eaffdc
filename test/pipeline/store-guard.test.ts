/**
 * StoreGuard: a result given at once (the in-process KV's runNow) is returned as it is, without a promise; a
 * promise is bounded by the timeout. Failures of either kind are counted and logged (throttled), quiet() swallows
 * them, and the first success after a failure logs the recovery.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { StoreGuard } from '../../core/pipeline/store-guard.ts';
import type { PluginLogger } from '../../core/pipeline/services.ts';

function guarded() {
  const lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = [];
  const log = (level: string) => (fields: Record<string, unknown>, msg: string) => lines.push({ level, fields, msg });
  const logger = { info: log('info'), warn: log('warn'), error: log('error'), debug: log('debug') } as unknown as PluginLogger;
  const guard = new StoreGuard({
    plugin: 'test', timeoutMs: 50, mode: 'open', logger,
    messages: { timeout: 'the store did not answer', failed: 'test: the store failed', recovered: 'test: the store answers again' },
  });
  return { guard, lines };
}

describe('StoreGuard', () => {
  test('a result given at once comes back as it is; a throw is a failure, counted, logged and rethrown', () => {
    const { guard, lines } = guarded();
    assert.deepEqual(guard.run('now', () => ({ n: 1 })), { n: 1 });
    assert.throws(() => guard.run('now', () => {
      throw new Error('value at k is not an integer');
    }), /not an integer/);
    assert.equal(guard.errors, 1);
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!.msg, 'test: the store failed');
    assert.equal(lines[0]!.fields.err, 'value at k is not an integer');
    assert.equal(guard.run('now', () => 2), 2);
    assert.equal(lines.at(-1)!.msg, 'test: the store answers again');
  });

  test('a promise is bounded by the timeout; quiet() swallows failures of both kinds', async () => {
    const { guard } = guarded();
    assert.equal(await guard.run('later', async () => 3), 3);
    await assert.rejects(Promise.resolve(guard.run('hangs', () => new Promise(() => {}))), /the store did not answer within 50 ms/);
    assert.equal(guard.errors, 1);
    assert.equal(guard.quiet('now', () => {
      throw new Error('boom');
    }), undefined);
    await guard.quiet('later', async () => {
      throw new Error('boom');
    });
    assert.equal(guard.errors, 3);
  });
});
