/**
 * RequestAbort: a request's cancellation without an AbortController until gw.signal is read. Its listeners run
 * once, can be taken back, and a signal made after the abort reports the same abort and reason.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { abortSignalOf, callSignal, onAbort, RequestAbort } from '../../core/pipeline/abort.ts';
import type { GatewayState } from '../../core/pipeline/context.ts';

describe('RequestAbort', () => {
  test('listeners run once with the reason; one taken back does not run; a later subscription runs nothing', () => {
    const abort = new RequestAbort();
    const heard: unknown[] = [];
    onAbort(abort, (reason) => heard.push(['first', reason]));
    const takeBack = abort.onAbort(() => heard.push('taken back'));
    abort.onAbort((reason) => heard.push(['third', reason]));
    takeBack();
    assert.equal(abort.aborted, false);
    const reason = new Error('gone');
    abort.abort(reason);
    abort.abort(new Error('again'));
    assert.equal(abort.aborted, true);
    assert.equal(abort.reason, reason);
    assert.deepEqual([...heard], [['first', reason], ['third', reason]]);
    abort.onAbort(() => heard.push('late'));
    assert.equal(heard.length, 2);
  });

  test('the signal made before the abort fires with it; one made after is aborted already; both carry the reason', () => {
    const before = new RequestAbort();
    const signal = before.signal;
    assert.equal(before.signal, signal, 'one signal per request');
    let fired = 0;
    signal.addEventListener('abort', () => fired++);
    before.abort('why');
    assert.equal(fired, 1);
    assert.equal(signal.reason, 'why');

    const after = new RequestAbort();
    after.abort();
    const late = abortSignalOf(after);
    assert.equal(late.aborted, true);
    assert.equal(late.reason, after.reason);
    assert.equal((late.reason as DOMException).name, 'AbortError', 'as AbortController.abort() without a reason');
  });

  test('onAbort on a plain AbortSignal subscribes and unsubscribes; callSignal falls back to gw.signal', () => {
    const controller = new AbortController();
    const heard: unknown[] = [];
    const off = onAbort(controller.signal, (reason) => heard.push(reason));
    onAbort(controller.signal, (reason) => heard.push(['kept', reason]));
    off();
    controller.abort('x');
    assert.deepEqual([...heard], [['kept', 'x']]);
    const gw = { signal: controller.signal } as unknown as GatewayState;
    assert.equal(callSignal(gw), controller.signal);
  });
});
