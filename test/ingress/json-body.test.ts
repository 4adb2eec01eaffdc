/**
 * The JSON body reader over a real socket: what it accepts, and the envelope of each refusal, the same as when
 * koa-body read the bodies (compressed bodies still go through koa-body).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import Koa from 'koa';
import { jsonBodyReader } from '../../core/ingress/body.ts';
import { GatewayError } from '../../core/errors.ts';

const LIMIT = 1024;
let server: Server;
let port: number;

before(async () => {
  const app = new Koa();
  const read = jsonBodyReader(LIMIT);
  app.use(async (ctx) => {
    try {
      ctx.body = { body: await read(ctx) ?? null };
    } catch (err) {
      const e = err as GatewayError;
      ctx.status = e.status;
      ctx.body = { code: e.code, message: e.message, details: e.details };
    }
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  port = (server.address() as AddressInfo).port;
});

after(() => new Promise<void>((resolve) => server.close(() => resolve())));

function send(body: Buffer | string, headers: Record<string, string | number> = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', agent: false, method: 'POST', path: '/', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('an object, an array, an empty body ({}), and a body after a byte-order mark are read', async () => {
  assert.deepEqual((await send('{"a":[1,{"b":"é"}]}')).json, { body: { a: [1, { b: 'é' }] } });
  assert.deepEqual((await send(' \n[1,2]')).json, { body: [1, 2] });
  assert.deepEqual((await send('')).json, { body: {} });
  assert.deepEqual((await send(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"x":1}')]))).json, { body: { x: 1 } });
});

test('a body chunked over several writes is read whole', async () => {
  const result = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', agent: false, method: 'POST', path: '/', headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>));
    });
    req.on('error', reject);
    req.write('{"messages":');
    setImmediate(() => req.end('["hi"]}'));
  });
  assert.deepEqual(result, { body: { messages: ['hi'] } });
});

test('malformed JSON, a scalar at the top and an own __proto__ key are 400s that say the body is not valid JSON', async () => {
  for (const body of ['{"a":', '"text"', '42', '{"__proto__":{"admin":true}}', '{"a":{"\\u005f_proto__":1}}']) {
    const { status, json } = await send(body);
    assert.equal(status, 400, body);
    assert.equal(json.code, 'VALIDATION_ERROR');
    assert.equal(json.message, 'Request body is not valid JSON');
  }
  const { json } = await send('"text"');
  assert.deepEqual(json.details, [{ path: '', message: 'invalid JSON, only supports object and array' }]);
  assert.deepEqual((await send('{"a":"__proto__"}')).json, { body: { a: '__proto__' } });
});

test('a body over the limit is a 413, whether its length is declared or it is chunked', async () => {
  const big = JSON.stringify({ text: 'x'.repeat(LIMIT) });
  const declared = await send(big);
  assert.equal(declared.status, 413);
  assert.equal(declared.json.code, 'PAYLOAD_TOO_LARGE');
  const chunked = await send(big, { 'transfer-encoding': 'chunked' });
  assert.equal(chunked.status, 413);
});

test('a gzip body is still read; an unknown encoding is refused as before', async () => {
  assert.deepEqual((await send(gzipSync('{"z":true}'), { 'content-encoding': 'gzip' })).json, { body: { z: true } });
  const unknown = await send('{"z":true}', { 'content-encoding': 'snappy' });
  assert.equal(unknown.status, 400);
  assert.equal(unknown.json.message, 'Unsupported request body encoding');
});

test('JSON by its Content-Type, as Koa decides it: parameters and +json suffixes accepted, other types and no body refused, every time', async () => {
  // Twice each: the second answer comes from the reader's memory of that header value.
  for (let round = 0; round < 2; round++) {
    for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON', 'application/vnd.api+json']) {
      assert.deepEqual((await send('{"a":1}', { 'content-type': type })).json, { body: { a: 1 } }, type);
    }
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx', 'not a type']) {
      const refused = await send('{"a":1}', { 'content-type': type });
      assert.equal(refused.status, 400, type);
      assert.equal(refused.json.message, 'Request body must be JSON (Content-Type: application/json)', type);
    }
  }
});
