/**
 * POST /v1/images/generations through a real gateway to gemini, vertex-ai and bedrock, with the official `openai`
 * client, against loopback fakes of each wire format: Imagen's :predict and a Gemini image model's generateContent
 * (x-goog-api-key), Imagen on Vertex AI with a service-account token (the OAuth exchange included), and Amazon Nova
 * Canvas, Titan and a Stability model through InvokeModel with every request's SigV4 signature checked. n split by
 * each provider's maxImages, the request each fake received, both response formats, errors mapped, refusals before
 * any call.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startFakeVertex, VERTEX_BASE_PATH, type FakeVertex } from '../fakes/vertex.ts';
import { ACCESS_KEY, REGION, SECRET, startFakeAws, type FakeAws } from '../providers/bedrock-files-fake.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const IMAGE = (who: string) => Buffer.from(`\x89PNG-${who}-image`, 'latin1').toString('base64');
interface Seen { method: string; path: string; headers: IncomingHttpHeaders; body: Record<string, any> }

/** The Gemini API: Imagen's :predict and generateContent; the prompt picks a failure (filtered, bad, busy). */
async function startFakeGemini(): Promise<{ origin: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(body));
      const body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as Record<string, any>;
      seen.push({ method: req.method!, path: req.url!, headers: req.headers, body });
      if (req.headers['x-goog-api-key'] !== 'gemini-key') return json(403, { error: { code: 403, message: 'Method doesn\'t allow unregistered callers.', status: 'PERMISSION_DENIED' } });
      const prompt = String(body.instances?.[0]?.prompt ?? body.contents?.[0]?.parts?.[0]?.text);
      if (prompt === 'bad') return json(400, { error: { code: 400, message: 'Image generation failed with the following error: aspect ratio not supported', status: 'INVALID_ARGUMENT' } });
      if (prompt === 'busy') return json(429, { error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' } });
      if (req.url!.endsWith(':predict')) {
        // Every image filtered: predictions left out.
        if (prompt === 'filtered') return json(200, {});
        return json(200, { predictions: Array.from({ length: body.parameters.sampleCount }, () => ({ mimeType: 'image/png', bytesBase64Encoded: IMAGE('imagen') })) });
      }
      if (req.url!.endsWith(':generateContent')) {
        return json(200, {
          candidates: [{ content: { role: 'model', parts: [{ text: 'Here is your image.' }, { inlineData: { mimeType: 'image/jpeg', data: IMAGE('gemini') } }] }, finishReason: 'STOP' }],
          usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 1290, totalTokenCount: 1299 }, modelVersion: 'gemini-2.5-flash-image',
        });
      }
      json(404, { error: { code: 404, message: 'not found', status: 'NOT_FOUND' } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('image generation on gemini, vertex-ai and bedrock', () => {
  let gemini: Awaited<ReturnType<typeof startFakeGemini>>;
  let vertex: FakeVertex;
  let aws: FakeAws;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;
  const vertexSeen: Seen[] = [];
  const invocations = () => aws.requests.filter((r) => r.url.startsWith('/model/'));

  before(async () => {
    gemini = await startFakeGemini();
    vertex = await startFakeVertex();
    vertex.route = async (req, res, url) => {
      if (!url.pathname.endsWith(':predict')) return false;
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, any>;
      vertexSeen.push({ method: req.method!, path: url.pathname, headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        predictions: Array.from({ length: body.parameters.sampleCount }, () => ({ mimeType: 'image/png', bytesBase64Encoded: IMAGE('vertex') })),
      }));
      return true;
    };
    aws = await startFakeAws();
    aws.runtime = (received, res) => {
      const body = JSON.parse(received.body.toString()) as Record<string, any>;
      if (received.url.startsWith('/model/stability.')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify(body.prompt === 'filtered' ? { finish_reasons: ['Filter reason: prompt'] } : { seeds: [2130420379], finish_reasons: [null], images: [IMAGE('stability')] }));
      }
      if (body.textToImageParams.text === 'blocked') {
        res.writeHead(400, { 'content-type': 'application/json', 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
        return void res.end(JSON.stringify({ message: 'This request has been blocked by our content filters.' }));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ images: Array.from({ length: body.imageGenerationConfig.numberOfImages }, () => IMAGE('nova')) }));
    };
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const keyFile = JSON.stringify({ client_email: 'gw@p1.iam.gserviceaccount.com', private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }), token_uri: `${vertex.origin}/token` });
    gw = await startTestGateway(`
routing:
  retries: 0
providers:
  gemini: { baseUrl: ${gemini.origin}/v1beta, apiKey: gemini-key, options: { personGeneration: allow_adult } }
  vertex-ai:
    baseUrl: ${vertex.origin}${VERTEX_BASE_PATH}
    options:
      serviceAccountKey: \${GOOGLE_SA_KEY}
  bedrock:
    baseUrl: ${aws.origin}
    options: { region: ${REGION}, accessKeyId: ${ACCESS_KEY}, secretAccessKey: "${SECRET}", s3Endpoint: ${aws.origin}/s3 }
models:
  - { id: imagen, provider: gemini, upstreamModel: imagen-4.0-generate-001 }
  - { id: gemini-image, provider: gemini, upstreamModel: gemini-2.5-flash-image }
  - { id: gemini-text, provider: gemini, upstreamModel: gemini-2.5-flash }
  - { id: vertex-imagen, provider: vertex-ai, upstreamModel: imagen-3.0-generate-002 }
  - { id: nova, provider: bedrock, upstreamModel: "amazon.nova-canvas-v1:0" }
  - { id: titan, provider: bedrock, upstreamModel: "amazon.titan-image-generator-v2:0" }
  - { id: sd, provider: bedrock, upstreamModel: "stability.sd3-5-large-v1:0" }
  - { id: sdxl, provider: bedrock, upstreamModel: "stability.stable-diffusion-xl-v1" }
pipelines:
  - name: images
    routes: [/v1/images/generations]
    plugins: [auth]
`, { env: { GOOGLE_SA_KEY: keyFile } });
    key = await gw.createKey({ scopes: { capabilities: ['images'] } });
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await Promise.all([gemini?.close(), vertex?.close(), aws?.close()]);
  });

  test('gemini Imagen: :predict with the key, n 6 as 4 + 2 images, the size as an aspect ratio, personGeneration from the options', async () => {
    const before = gemini.seen.length;
    const answer = await client.images.generate({ model: 'imagen', prompt: 'a lighthouse', n: 6, size: '1792x1024', response_format: 'b64_json' });
    assert.equal(answer.data?.length, 6);
    for (const image of answer.data!) assert.equal(image.b64_json, IMAGE('imagen'));
    const calls = gemini.seen.slice(before);
    assert.deepEqual(calls.map((c) => [c.method, c.path]), [['POST', '/v1beta/models/imagen-4.0-generate-001:predict'], ['POST', '/v1beta/models/imagen-4.0-generate-001:predict']]);
    assert.deepEqual(calls.map((c) => c.body), [4, 2].map((sampleCount) => ({ instances: [{ prompt: 'a lighthouse' }], parameters: { sampleCount, aspectRatio: '16:9', personGeneration: 'allow_adult' } })));
    assert.equal(calls[0]!.headers['x-goog-api-key'], 'gemini-key');
    assert.equal(calls[0]!.headers.authorization, undefined);
  });

  test('gemini image model: generateContent with IMAGE output, one call per image; its inline image as a data: URL', async () => {
    const before = gemini.seen.length;
    const answer = await client.images.generate({ model: 'gemini-image', prompt: 'a fox', size: '1024x1024', n: 2 });
    assert.deepEqual(answer.data!.map((d) => d.url), Array(2).fill(`data:image/jpeg;base64,${IMAGE('gemini')}`));
    const calls = gemini.seen.slice(before);
    assert.deepEqual(calls.map((c) => c.path), Array(2).fill('/v1beta/models/gemini-2.5-flash-image:generateContent'));
    assert.deepEqual(calls[0]!.body, { contents: [{ role: 'user', parts: [{ text: 'a fox' }] }], generationConfig: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '1:1' } } });
  });

  test('vertex-ai Imagen: the service-account token, the project\'s model path, n 5 as 4 + 1', async () => {
    const answer = await client.images.generate({ model: 'vertex-imagen', prompt: 'a harbour', n: 5, size: '1024x1792', response_format: 'b64_json' });
    assert.deepEqual(answer.data!.map((d) => d.b64_json), Array(5).fill(IMAGE('vertex')));
    assert.ok(vertex.requests.some((r) => r.path === '/token'), 'the token was exchanged');
    assert.deepEqual(vertexSeen.map((c) => [c.path, c.headers.authorization, c.body.parameters]), [4, 1].map((sampleCount) => [
      `${VERTEX_BASE_PATH}/publishers/google/models/imagen-3.0-generate-002:predict`, `Bearer ${vertex.token}`, { sampleCount, aspectRatio: '9:16' },
    ]));
    assert.deepEqual(vertex.unauthorized, []);
  });

  test('bedrock Nova Canvas and Titan: InvokeModel signed with SigV4, n 7 as 5 + 2, quality hd as premium, a Nova style', async () => {
    const answer = await client.images.generate({ model: 'nova', prompt: 'a tram', n: 7, size: '1280x720', quality: 'hd', style: 'photorealism' as 'vivid', response_format: 'b64_json' });
    assert.deepEqual(answer.data!.map((d) => d.b64_json), Array(7).fill(IMAGE('nova')));
    const [first, second] = invocations();
    assert.equal(first!.url, '/model/amazon.nova-canvas-v1%3A0/invoke');
    assert.deepEqual([first!.problem, second!.problem], [null, null], 'both signatures verify');
    assert.deepEqual([first, second].map((r) => JSON.parse(r!.body.toString())), [5, 2].map((numberOfImages) => ({
      taskType: 'TEXT_IMAGE', textToImageParams: { text: 'a tram', style: 'PHOTOREALISM' },
      imageGenerationConfig: { numberOfImages, width: 1280, height: 720, quality: 'premium' },
    })));
    // OpenAI's default style has no Amazon counterpart: left out, not refused.
    const titan = await client.images.generate({ model: 'titan', prompt: 'a bridge', style: 'vivid' });
    assert.equal(titan.data![0]!.url, `data:image/png;base64,${IMAGE('nova')}`);
    const last = invocations().at(-1)!;
    assert.equal(last.url, '/model/amazon.titan-image-generator-v2%3A0/invoke');
    assert.deepEqual(JSON.parse(last.body.toString()), { taskType: 'TEXT_IMAGE', textToImageParams: { text: 'a bridge' }, imageGenerationConfig: { numberOfImages: 1 } });
  });

  test('bedrock Stability models: their own body, the size as an aspect ratio, one call per image', async () => {
    const before = invocations().length;
    const answer = await client.images.generate({ model: 'sd', prompt: 'a kite', n: 2, size: '1536x1024', quality: 'standard', response_format: 'b64_json' });
    assert.deepEqual(answer.data!.map((d) => d.b64_json), Array(2).fill(IMAGE('stability')));
    const calls = invocations().slice(before);
    assert.deepEqual(calls.map((c) => [c.url, c.problem]), Array(2).fill(['/model/stability.sd3-5-large-v1%3A0/invoke', null]));
    assert.deepEqual(JSON.parse(calls[0]!.body.toString()), { prompt: 'a kite', aspect_ratio: '3:2', output_format: 'png' });
  });

  test('errors: the provider\'s own mapped to the gateway\'s codes, a filtered answer as 400', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const cases = [
      { body: { model: 'imagen', prompt: 'bad' }, status: 400, code: 'UPSTREAM_BAD_REQUEST', message: /aspect ratio not supported/ },
      { body: { model: 'imagen', prompt: 'busy' }, status: 429, code: 'UPSTREAM_RATE_LIMITED', message: /exhausted/ },
      { body: { model: 'imagen', prompt: 'filtered' }, status: 400, code: 'UPSTREAM_BAD_REQUEST', message: /safety filters/ },
      { body: { model: 'nova', prompt: 'blocked' }, status: 400, code: 'UPSTREAM_BAD_REQUEST', message: /ValidationException: This request has been blocked/ },
      { body: { model: 'sd', prompt: 'filtered' }, status: 400, code: 'UPSTREAM_BAD_REQUEST', message: /Filter reason: prompt/ },
    ];
    for (const { body, status, code, message } of cases) {
      const answer = await postJson(`${gw.url}/v1/images/generations`, body, auth);
      assert.equal(answer.status, status, JSON.stringify(answer.body));
      assert.equal(answer.body.error.code, code);
      assert.match(answer.body.error.message, message);
    }
  });

  test('refusals before any upstream call: other models, sizes no ratio fits, unknown styles and qualities', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const before = [gemini.seen.length, vertexSeen.length, invocations().length];
    for (const [body, pattern] of [
      [{ model: 'sdxl', prompt: 'p' }, /Amazon Nova Canvas, Titan Image Generator, and Stability's Stable Diffusion 3.x/],
      [{ model: 'gemini-text', prompt: 'p' }, /Imagen models imagen-\* and Gemini image models/],
      [{ model: 'imagen', prompt: 'p', size: '1000x100' }, /aspect ratios 1:1, 3:4, 4:3, 9:16, 16:9/],
      [{ model: 'nova', prompt: 'p', style: 'watercolour' }, /styles: 3D_ANIMATED_FAMILY_FILM/],
      [{ model: 'titan', prompt: 'p', style: 'PHOTOREALISM' }, /takes no style/],
      [{ model: 'nova', prompt: 'p', quality: 'ultra' }, /quality ultra/],
    ] as const) {
      const answer = await postJson(`${gw.url}/v1/images/generations`, body, auth);
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.equal(answer.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
      assert.match(answer.body.error.message, pattern);
    }
    assert.deepEqual([gemini.seen.length, vertexSeen.length, invocations().length], before, 'no refusal reached a provider');
  });
});
