/** The `outbound` and `webhooks` sections of pipelines.yaml: defaults, bounds, and allow-list entries checked at boot. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '../../core/config/document.ts';
import { parseConfig } from '../helpers/config.ts';

const parse = (text: string) => parseConfig(text, { file: 'pipelines.yaml', display: 'pipelines.yaml', env: {}, cwd: process.cwd() });

async function issues(text: string): Promise<Array<{ pointer: string; message: string }>> {
  try {
    await parse(text);
  } catch (err) {
    if (err instanceof ConfigError) return err.issues.map(({ pointer, message }) => ({ pointer, message }));
    throw err;
  }
  return assert.fail('the config was accepted');
}

describe('outbound and webhooks config', () => {
  test('defaults: https only, nothing allow-listed, 10 s per attempt, 6 attempts, 30 s base backoff', async () => {
    const { config } = await parse('server:\n  port: 8080\n');
    assert.deepEqual(config.outbound, { allowHttp: false, allowedAddresses: [] });
    assert.deepEqual(config.webhooks, { timeoutMs: 10000, maxAttempts: 6, backoffMs: 30000 });
  });

  test('addresses, ranges and host names are accepted', async () => {
    const { config } = await parse(`outbound:
  allowHttp: true
  allowedAddresses: [127.0.0.1, "::1", 10.0.0.0/8, hooks.internal.example]
webhooks:
  timeoutMs: 250
  maxAttempts: 3
  backoffMs: 5
`);
    assert.deepEqual(config.outbound, { allowHttp: true, allowedAddresses: ['127.0.0.1', '::1', '10.0.0.0/8', 'hooks.internal.example'] });
    assert.deepEqual(config.webhooks, { timeoutMs: 250, maxAttempts: 3, backoffMs: 5 });
  });

  test('an allow-list entry that is none of them stops the boot, naming it', async () => {
    assert.deepEqual(await issues('outbound:\n  allowedAddresses: [127.0.0.1, 10.0.0.256, "hooks_internal"]\n'), [
      { pointer: '/outbound/allowedAddresses/1', message: 'not an IPv4/IPv6 address, CIDR range or host name: "10.0.0.256"' },
      { pointer: '/outbound/allowedAddresses/2', message: 'not an IPv4/IPv6 address, CIDR range or host name: "hooks_internal"' },
    ]);
  });

  test('maxAttempts is 1 to 20, timeouts and backoff at least 1 ms', async () => {
    for (const [key, value] of [['maxAttempts', 0], ['maxAttempts', 21], ['timeoutMs', 0], ['backoffMs', 0]] as const) {
      const found = await issues(`webhooks:\n  ${key}: ${value}\n`);
      assert.equal(found.length, 1, `${key}: ${value}`);
      assert.equal(found[0]!.pointer, `/webhooks/${key}`);
    }
  });
});
