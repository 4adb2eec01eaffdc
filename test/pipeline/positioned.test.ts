/**
 * The plugin wrapper (core/pipeline/stages.ts, positioned): each plugin's own time excludes what ran downstream
 * of it (the next plugins, the dispatcher), and stages registered at any point of a
 * plugin's code, before or after next, or in its catch, are attributed to that plugin.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import compose from 'koa-compose';
import { attachStages, positioned, StageList } from '../../core/pipeline/stages.ts';
import type { GatewayContext, GatewayMiddleware, GatewayState } from '../../core/pipeline/context.ts';

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function request(plugins: number): { ctx: GatewayContext; list: StageList; pluginMs: number[] } {
  const list = new StageList();
  const pluginMs = new Array<number>(plugins).fill(-1);
  const gw = { observed: { pluginMs }, stage: (stage: object) => list.add(stage) } as unknown as GatewayState;
  attachStages(gw, list);
  return { ctx: { state: { gw } } as unknown as GatewayContext, list, pluginMs };
}

function chain(plugins: GatewayMiddleware[], dispatcher: GatewayMiddleware) {
  const wrapped = plugins.map((middleware, position) => positioned(position, middleware, position === plugins.length - 1));
  return compose([...wrapped, dispatcher] as never[]) as unknown as (ctx: GatewayContext) => Promise<void>;
}

test('a plugin\'s own time leaves out the plugins after it and the dispatcher', async () => {
  const { ctx, pluginMs } = request(3);
  await chain([
    async (_ctx, next) => { await wait(20); await next(); },
    async (_ctx, next) => { await next(); },
    async (_ctx, next) => { await next(); await wait(20); },
  ], async () => { await wait(60); })(ctx);
  assert.ok(pluginMs[0]! >= 19 && pluginMs[0]! < 50, `first plugin ${pluginMs[0]} ms`);
  assert.ok(pluginMs[1]! >= 0 && pluginMs[1]! < 15, `middle plugin ${pluginMs[1]} ms`);
  assert.ok(pluginMs[2]! >= 19 && pluginMs[2]! < 50, `last plugin ${pluginMs[2]} ms`);
});

test('stages registered before next, after it and in a catch belong to the plugin that registered them', async () => {
  const { ctx, list } = request(3);
  const stage = (name: string) => ({ complete: () => name });
  await chain([
    async (c, next) => { c.state.gw.stage(stage('0-before')); await next(); c.state.gw.stage(stage('0-after')); },
    async (c, next) => {
      c.state.gw.stage(stage('1-before'));
      try {
        await next();
      } catch {
        c.state.gw.stage(stage('1-catch'));
      }
    },
    async (c, next) => { c.state.gw.stage(stage('2-before')); await next(); },
  ], async () => { throw new Error('upstream failed'); })(ctx);
  const seen = list.entries.map((e) => `${e.plugin}:${(e.stage.complete as () => string)()}`);
  assert.deepEqual(seen, ['0:0-before', '1:1-before', '2:2-before', '1:1-catch', '0:0-after']);
});
