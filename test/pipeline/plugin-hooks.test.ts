/** The definition rules of onAdminWrite and commands, and the admin-write listener's isolation of failing hooks. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { definePlugin, type AnyPluginDefinition } from '../../core/pipeline/plugin.ts';
import { pluginAdminWriteListener } from '../../core/pipeline/plugin-routes.ts';
import type { AdminWriteEvent } from '../../core/pipeline/routes.ts';
import type { PluginServices } from '../../core/pipeline/services.ts';

const base = { name: 'odd', description: 'odd', configSchema: { type: 'object' as const }, setup: () => async () => {} };

describe('onAdminWrite and commands in the definition', () => {
  test('onAdminWrite must be a function', () => {
    assert.throws(() => definePlugin({ ...base, onAdminWrite: 'later' } as never), /plugin "odd": onAdminWrite must be a function/);
    assert.doesNotThrow(() => definePlugin({ ...base, onAdminWrite: () => {} }));
  });

  test('a command needs a lower-case name, usage and run', () => {
    assert.throws(() => definePlugin({ ...base, commands: [{ name: 'Bad Name', usage: '', run: async () => 0 }] }), /a command's name must match/);
    assert.throws(() => definePlugin({ ...base, commands: [{ name: 'tool', run: async () => 0 }] } as never), /command tool needs usage and a run function/);
    assert.doesNotThrow(() => definePlugin({ ...base, commands: [{ name: 'tool', usage: '  tool   does things', run: async () => 0 }] }));
  });
});

describe('the admin-write listener', () => {
  test('every hook gets the event; one that throws or rejects is logged and the others still run', async () => {
    const seen: string[] = [];
    const errors: string[] = [];
    const services = { logger: { error: (context: { plugin: string }) => errors.push(context.plugin) } } as unknown as PluginServices;
    const plugins = [
      { ...base, name: 'throws', onAdminWrite: () => { throw new Error('no'); } },
      { ...base, name: 'rejects', onAdminWrite: async () => { throw new Error('no'); } },
      { ...base, name: 'records', onAdminWrite: (event: AdminWriteEvent, _s: PluginServices, shared: string) => void seen.push(`${shared}:${event.route}`) },
    ] as unknown as AnyPluginDefinition[];
    const listener = pluginAdminWriteListener(plugins, services, new Map([['records', 'state']]));
    listener({ time: 0, requestId: 'r', actor: 'cli', tenantId: null, method: 'POST', path: '/admin/v1/keys', route: '/admin/v1/keys', params: {}, status: 201, errorCode: null, clientIp: '127.0.0.1' });
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(seen, ['state:/admin/v1/keys']);
    assert.deepEqual(errors.sort(), ['rejects', 'throws']);
  });
});
