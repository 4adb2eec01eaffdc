/**
 * Polls `check` until it resolves, for state that settles a little after the call that caused it (a store that
 * comes back, a counter written after the response). The last failure is rethrown once `timeoutMs` has passed, so
 * a test that never settles fails with the assertion that says why.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export async function eventually(check: () => Promise<unknown>, timeoutMs = 10_000, intervalMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(intervalMs);
    }
  }
}
