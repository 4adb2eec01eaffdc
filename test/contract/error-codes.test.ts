/** Plugins' error codes: registered with their status and envelope, refused when they clash, rendered as declared. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { errorCatalogue, GatewayError, registerErrorCode, renderError } from '../../core/errors.ts';
import { definePlugin } from '../../core/pipeline/plugin.ts';
import { PluginRegistry } from '../../core/pipeline/registry.ts';

const plugin = (errors: Record<string, { status: number; description: string; envelope?: 'endpoint' | 'canonical' }>, name = 'coded') =>
  definePlugin({ name, description: 'x', configSchema: { type: 'object', properties: {} }, setup: () => async (_ctx, next) => next(), errors });

test('a registered code answers with its status; in the endpoint\'s envelope by default, or always canonical', () => {
  new PluginRegistry().register(plugin({
    QUOTA_TIER_FULL: { status: 409, description: 'x' },
    TIER_SUSPENDED: { status: 423, description: 'x', envelope: 'canonical' },
  }));
  assert.equal(errorCatalogue().QUOTA_TIER_FULL, 409);
  const full = new GatewayError('QUOTA_TIER_FULL', 'full');
  assert.equal(full.status, 409);
  assert.deepEqual(renderError(full, 'messages'), { type: 'error', error: { type: 'api_error', message: 'full' } });
  assert.deepEqual(renderError(full, 'canonical'), { error: { code: 'QUOTA_TIER_FULL', message: 'full', details: null } });
  const suspended = new GatewayError('TIER_SUSPENDED', 'suspended', { tier: 'gold' });
  assert.deepEqual(renderError(suspended, 'messages'), { error: { code: 'TIER_SUSPENDED', message: 'suspended', details: { tier: 'gold' } } });
  assert.deepEqual(renderError(suspended, 'legacy'), { error: { code: 'TIER_SUSPENDED', message: 'suspended', details: { tier: 'gold' } } });
});

test('registering again is harmless; another status or envelope, a core code, or a bad name is refused', () => {
  registerErrorCode('SAME_AGAIN', 409, 'one');
  registerErrorCode('SAME_AGAIN', 409, 'two');
  assert.throws(() => registerErrorCode('SAME_AGAIN', 410, 'three'), /already registered by one with status 409/);
  assert.throws(() => registerErrorCode('SAME_AGAIN', 409, 'four', 'canonical'), /already registered by one/);
  assert.throws(() => registerErrorCode('NOT_FOUND', 404, 'five'), /is one of the core's/);
  assert.throws(() => registerErrorCode('lower_case', 400, 'six'), /must match/);
  assert.throws(() => registerErrorCode('OUT_OF_RANGE', 302, 'seven'), /from 400 to 599/);
  assert.throws(() => plugin({ bad: { status: 400, description: 'x' } }, 'badly-coded'), /error code "bad" must match/);
});

test('a code nobody registered cannot be thrown as a GatewayError (it surfaces as a bug, not as a made-up status)', () => {
  assert.throws(() => new GatewayError('NEVER_REGISTERED', 'x'), /unknown error code "NEVER_REGISTERED"/);
});
