/**
 * The gateway's response.set and type setter answer as Koa's own: the same headers for every form of value, the
 * same refusal of two Content-Types, nothing once the headers are sent, and the same content types by name.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import Koa from 'koa';
import { installLeanResponse } from '../../core/server/lean-response.ts';

type Handler = (ctx: Koa.Context) => void;

/** Two apps, Koa's own and the gateway's, that run the same handler; returns each answer's headers and status. */
async function bothWays(handler: Handler): Promise<Array<{ status: number; headers: Record<string, string> }>> {
  const out = [];
  for (const app of [koaApp, leanApp]) {
    current = handler;
    const res = await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/`);
    await res.text();
    const headers = Object.fromEntries([...res.headers].filter(([name]) => !['date', 'connection', 'keep-alive'].includes(name)));
    out.push({ status: res.status, headers });
  }
  return out;
}

let current: Handler = () => {};
const start = (lean: boolean) => {
  const app = new Koa();
  app.silent = true;
  if (lean) installLeanResponse(app);
  app.use((ctx) => current(ctx));
  const server = app.listen(0, '127.0.0.1');
  return { app, server };
};
let koaApp: ReturnType<typeof start>;
let leanApp: ReturnType<typeof start>;

describe('the lean response.set and type', () => {
  before(async () => {
    koaApp = start(false);
    leanApp = start(true);
    await Promise.all([once(koaApp.server, 'listening'), once(leanApp.server, 'listening')]);
  });
  after(() => {
    koaApp.server.close();
    leanApp.server.close();
  });

  test('headers set by name, by object, as numbers and as lists come out as with Koa\'s own', async () => {
    const [koa, lean] = await bothWays((ctx) => {
      ctx.set('X-Request-ID', 'abc');
      ctx.set({ 'X-RateLimit-Limit': '10', 'X-Two': ['a', 'b'] });
      ctx.set('X-Number', 7 as unknown as string);
      ctx.set('Content-Type', ['text/plain']);
      ctx.body = 'hello';
    });
    assert.deepEqual(lean, koa);
    // And the gateway's are the ones that ran.
    assert.ok(Object.hasOwn(leanApp.app.response, 'set') && Object.hasOwn(leanApp.app.response, 'type'));
    assert.ok(!Object.hasOwn(koaApp.app.response, 'set'));
    assert.equal(lean!.headers['x-two'], 'a, b');
    assert.equal(lean!.headers['content-type'], 'text/plain');
  });

  test('a Content-Type or Content-Length list of two is refused, as Koa refuses it', async () => {
    for (const field of ['Content-Type', 'content-length']) {
      const caught: string[] = [];
      const [koa, lean] = await bothWays((ctx) => {
        try {
          ctx.set(field, ['1', '2']);
        } catch (err) {
          caught.push((err as Error).message);
        }
        ctx.body = 'ok';
      });
      assert.deepEqual(lean, koa);
      assert.deepEqual(caught, [`${field} must contain exactly one value`, `${field} must contain exactly one value`]);
    }
  });

  test('the type setter resolves names and types alike, and an unknown one removes the header', async () => {
    for (const type of ['json', 'text', 'bin', 'html', 'application/json', 'text/event-stream', 'png', 'no-such-type']) {
      const seen: string[] = [];
      const [koa, lean] = await bothWays((ctx) => {
        ctx.set('Content-Type', 'text/plain');
        ctx.type = type;
        seen.push(ctx.type);
        ctx.body = Buffer.from('x');
      });
      assert.deepEqual(lean, koa, type);
      assert.equal(seen[0], seen[1], type);
    }
    const [koa, lean] = await bothWays((ctx) => {
      ctx.body = { a: 1 };
    });
    assert.deepEqual(lean, koa);
    assert.equal(lean!.headers['content-type'], 'application/json; charset=utf-8');
  });

  test('nothing is set once the headers are sent', async () => {
    const [koa, lean] = await bothWays((ctx) => {
      ctx.respond = false;
      ctx.res.writeHead(200, { 'content-type': 'text/plain' });
      ctx.set('X-Late', 'yes');
      ctx.type = 'json';
      ctx.res.end('done');
    });
    assert.deepEqual(lean, koa);
    assert.equal(lean!.headers['x-late'], undefined);
  });
});
