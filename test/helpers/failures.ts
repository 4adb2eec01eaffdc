/**
 * The error a call is expected to fail with, returned so that the test can check its code, status and details;
 * anything else (no error, or an error of another kind) fails the test where it happened.
 */
import assert from 'node:assert/strict';
import { GatewayError } from '../../core/errors.ts';

/** The GatewayError that `fn` throws (a translator refusing a request or an answer). */
export function gatewayError(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof GatewayError, `expected a GatewayError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected an error');
}

/** The GatewayError that `promise` rejects with (an upstream error through the provider's mapError). */
export async function gatewayRejection(promise: Promise<unknown>): Promise<GatewayError> {
  const err = await promise.then(() => assert.fail('expected an error'), (e: unknown) => e);
  assert.ok(err instanceof GatewayError, `expected a GatewayError, got ${String(err)}`);
  return err;
}

/** What the openai client rejects with when the gateway answers an error: the status and the envelope's error. */
export interface ClientError {
  status?: number;
  error?: { code?: string; details?: unknown };
}

/** The error the openai client rejects with; fails the test if the call succeeds. */
export const clientFailure = (promise: Promise<unknown>): Promise<ClientError> =>
  promise.then(() => assert.fail('expected an error'), (err: unknown) => err as ClientError);

/** A 400 VALIDATION_ERROR answer (from postJson) with an issue at `path` whose message matches. */
export function assertValidationIssue(answer: { status: number; body: any }, path: string, message: RegExp): void {
  assert.equal(answer.status, 400, JSON.stringify(answer.body));
  assert.equal(answer.body.error.code, 'VALIDATION_ERROR');
  const issue = answer.body.error.details.find((d: { path: string }) => d.path === path);
  assert.ok(issue, `an issue at ${path}: ${JSON.stringify(answer.body.error.details)}`);
  assert.match(issue.message, message);
}
