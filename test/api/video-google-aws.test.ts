/**
 * POST /v1/video/generations through a real gateway on gemini (Veo on the Gemini API), vertex-ai (Veo on Vertex
 * AI) and bedrock (Nova Reel), each against a loopback fake of its wire format that walks its task through two
 * running answers to done: the gateway's job runner polls to the end, and the video is streamed from the job's
 * content route, fetched with the provider's credential (the API key, the OAuth token, a SigV4 signature for S3).
 * A failed task, the seconds billed, and a refusal before any call.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startFakeVertex, VERTEX_BASE_PATH, type FakeVertex } from '../fakes/vertex.ts';
import { ACCESS_KEY, REGION, SECRET, startFakeAws, type FakeAws } from '../providers/bedrock-files-fake.ts';
import { eventually } from '../helpers/eventually.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const MP4 = (who: string) => Buffer.from(`\x00\x00\x00\x18ftypmp42-${who}-video`, 'latin1');
const RUNNING_POLLS = 2;

/** Veo on the Gemini API: an operation per create, done after two polls, its video served with the key only. */
async function startFakeGemini(): Promise<{ origin: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const polls = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const json = (status: number, b: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(b));
      seen.push(`${req.method} ${req.url} ${String(req.headers['x-goog-api-key'])}`);
      if (req.headers['x-goog-api-key'] !== 'gemini-key') return json(403, { error: { code: 403, message: 'API key not valid.', status: 'PERMISSION_DENIED' } });
      if (req.url!.endsWith(':predictLongRunning')) {
        const name = `models/veo-3.0-generate-001/operations/op${polls.size + 1}`;
        polls.set(name, 0);
        return json(200, { name });
      }
      const name = req.url!.slice('/v1beta/'.length);
      if (polls.has(name)) {
        const count = polls.get(name)! + 1;
        polls.set(name, count);
        if (count <= RUNNING_POLLS) return json(200, { name });
        return json(200, { name, done: true, response: { generateVideoResponse: { generatedSamples: [{ video: { uri: `http://${req.headers.host}/v1beta/files/${name.split('/').at(-1)}:download?alt=media` } }] } } });
      }
      if (req.url!.startsWith('/v1beta/files/')) return res.writeHead(200, { 'content-type': 'video/mp4' }).end(MP4('gemini'));
      json(404, { error: { code: 404, message: 'not found', status: 'NOT_FOUND' } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('video generation on gemini, vertex-ai and bedrock', () => {
  let gemini: Awaited<ReturnType<typeof startFakeGemini>>;
  let vertex: FakeVertex;
  let aws: FakeAws;
  let gw: TestGateway;
  let key: string;
  const vertexSeen: Array<{ path: string; body: any }> = [];
  const arn = (n: number) => `arn:aws:bedrock:${REGION}:123456789012:async-invoke/reel0000000${n}`;

  before(async () => {
    gemini = await startFakeGemini();
    vertex = await startFakeVertex();
    const model = `${VERTEX_BASE_PATH}/publishers/google/models/veo-2.0-generate-001`;
    vertex.route = async (req, res, url) => {
      if (!url.pathname.startsWith(model)) return false;
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString()) as any;
      vertexSeen.push({ path: url.pathname, body });
      const json = (b: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(b));
      if (url.pathname.endsWith(':predictLongRunning')) return json({ name: 'projects/p1/locations/us-central1/publishers/google/models/veo-2.0-generate-001/operations/v1' }), true;
      if (vertexSeen.filter((s) => s.path.endsWith(':fetchPredictOperation')).length <= RUNNING_POLLS) return json({ name: body.operationName }), true;
      vertex.objects.set('gs://veo-out/runs/v1/sample_0.mp4', { bucket: 'veo-out', name: 'runs/v1/sample_0.mp4', data: MP4('vertex'), contentType: 'video/mp4' });
      return json({ name: body.operationName, done: true, response: { videos: [{ gcsUri: 'gs://veo-out/runs/v1/sample_0.mp4', mimeType: 'video/mp4' }] } }), true;
    };
    aws = await startFakeAws();
    const invocations: Array<{ prompt: string; polls: number }> = [];
    aws.runtime = (received, res) => {
      const json = (b: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(b));
      if (received.method === 'POST' && received.url === '/async-invoke') {
        invocations.push({ prompt: JSON.parse(received.body.toString()).modelInput.textToVideoParams.text, polls: 0 });
        return json({ invocationArn: arn(invocations.length) });
      }
      const n = Number(decodeURIComponent(received.url).slice(-1));
      const invocation = invocations[n - 1]!;
      const s3Uri = `s3://reels/out/reel0000000${n}`;
      if (++invocation.polls <= RUNNING_POLLS) return json({ invocationArn: arn(n), status: 'InProgress', outputDataConfig: { s3OutputDataConfig: { s3Uri } } });
      if (invocation.prompt === 'fail') return json({ invocationArn: arn(n), status: 'Failed', failureMessage: 'The output was blocked by content filters.', outputDataConfig: { s3OutputDataConfig: { s3Uri } } });
      aws.objects.set(`reels/out/reel0000000${n}/output.mp4`, MP4('bedrock'));
      json({ invocationArn: arn(n), status: 'Completed', outputDataConfig: { s3OutputDataConfig: { s3Uri } } });
    };
    gw = await startTestGateway(`
jobs:
  pollIntervalMs: 10
video:
  pollIntervalMs: 20
  maxJobMinutes: 30
providers:
  gemini: { baseUrl: ${gemini.origin}/v1beta, apiKey: gemini-key }
  vertex-ai:
    baseUrl: ${vertex.origin}${VERTEX_BASE_PATH}
    apiKey: ${vertex.token}
    options: { videoStorageUri: "gs://veo-out/runs/", storageUrl: ${vertex.origin} }
  bedrock:
    baseUrl: ${aws.origin}
    options: { region: ${REGION}, accessKeyId: ${ACCESS_KEY}, secretAccessKey: "${SECRET}", s3Endpoint: ${aws.origin}/s3, videoOutputS3Uri: "s3://reels/out/" }
models:
  - { id: veo, provider: gemini, upstreamModel: veo-3.0-generate-001, pricing: { videoSecond: 0.5 } }
  - { id: vertex-veo, provider: vertex-ai, upstreamModel: veo-2.0-generate-001 }
  - { id: reel, provider: bedrock, upstreamModel: "amazon.nova-reel-v1:0" }
pipelines:
  - name: video
    routes: [/v1/video/generations]
    plugins: [auth]
`);
    key = await gw.createKey({ scopes: { capabilities: ['video-generation'] } });
  });
  after(async () => {
    await gw?.close();
    await Promise.all([gemini?.close(), vertex?.close(), aws?.close()]);
  });

  const auth = () => ({ authorization: `Bearer ${key}` });
  const job = async (id: string) => (await (await fetch(`${gw.url}/v1/video/generations/${id}`, { headers: auth() })).json()) as any;
  /** Starts a job, waits for it to end, and returns it with its video's bytes when it has one. */
  const run = async (body: Record<string, unknown>, type: string | null = 'video/mp4') => {
    const created = await postJson(`${gw.url}/v1/video/generations`, body, auth());
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.status, 'queued');
    let done: any;
    await eventually(async () => {
      done = await job(created.body.id);
      assert.ok(['completed', 'failed'].includes(done.status), done.status);
    }, 10_000, 20);
    if (done.status !== 'completed') return { job: done, video: null };
    assert.equal(done.url, `${gw.url}/v1/video/generations/${done.id}/content`, 'the gateway serves a video that needs the credential');
    const response = await fetch(done.url, { headers: auth() });
    assert.equal(response.status, 200);
    if (type) assert.equal(response.headers.get('content-type'), type);
    return { job: done, video: Buffer.from(await response.arrayBuffer()) };
  };

  test('gemini: predictLongRunning, the operation polled by name until done, the video fetched with the key', async () => {
    const { job: done, video } = await run({ model: 'veo', prompt: 'a wave', seconds: 8, size: '1280x720' });
    assert.deepEqual(video, MP4('gemini'));
    assert.equal(done.seconds, 8);
    assert.deepEqual(gemini.seen, [
      'POST /v1beta/models/veo-3.0-generate-001:predictLongRunning gemini-key',
      ...Array(RUNNING_POLLS + 1).fill('GET /v1beta/models/veo-3.0-generate-001/operations/op1 gemini-key'),
      'GET /v1beta/files/op1:download?alt=media gemini-key',
    ]);
  });

  test('vertex-ai: storageUri sent, fetchPredictOperation until done, the video read from Cloud Storage with the token', async () => {
    const { video } = await run({ model: 'vertex-veo', prompt: 'a harbour', seed: 11, aspect_ratio: '9:16' });
    assert.deepEqual(video, MP4('vertex'));
    assert.deepEqual(vertexSeen[0]!.body, { instances: [{ prompt: 'a harbour' }], parameters: { aspectRatio: '9:16', sampleCount: 1, storageUri: 'gs://veo-out/runs/', seed: 11 } });
    assert.deepEqual(vertexSeen.slice(1).map((s) => s.body), Array(RUNNING_POLLS + 1).fill({ operationName: 'projects/p1/locations/us-central1/publishers/google/models/veo-2.0-generate-001/operations/v1' }));
    assert.ok(vertex.requests.some((r) => r.path === '/storage/v1/b/veo-out/o/runs%2Fv1%2Fsample_0.mp4?alt=media'));
    assert.deepEqual(vertex.unauthorized, []);
  });

  test('bedrock: StartAsyncInvoke, GetAsyncInvoke until Completed, output.mp4 read from S3; every request SigV4-checked', async () => {
    // The fake's S3 stores the object without a type and answers application/octet-stream, which the gateway passes on.
    const { video } = await run({ model: 'reel', prompt: 'a tram' }, null);
    assert.deepEqual(video, MP4('bedrock'));
    const sent = aws.requests.map((r) => [r.method, r.url, r.service, r.problem]);
    assert.deepEqual(sent, [
      ['POST', '/async-invoke', 'bedrock', null],
      ...Array(RUNNING_POLLS + 1).fill(['GET', `/async-invoke/${encodeURIComponent(arn(1))}`, 'bedrock', null]),
      ['GET', '/s3/reels/out/reel00000001/output.mp4', 's3', null],
    ]);
    assert.deepEqual(JSON.parse(aws.requests[0]!.body.toString()), {
      modelId: 'amazon.nova-reel-v1:0',
      modelInput: { taskType: 'TEXT_VIDEO', textToVideoParams: { text: 'a tram' }, videoGenerationConfig: { durationSeconds: 6, fps: 24, dimension: '1280x720' } },
      outputDataConfig: { s3OutputDataConfig: { s3Uri: 's3://reels/out/' } },
    });
  });

  test('bedrock: a Failed invocation fails the job with its reason', async () => {
    const { job: failed, video } = await run({ model: 'reel', prompt: 'fail' });
    assert.equal(video, null);
    assert.equal(failed.status, 'failed');
    assert.match(failed.error.message, /blocked by content filters/);
  });

  test('refused before any call: a seed on the Gemini API, a size Nova Reel does not make', async () => {
    const before = [gemini.seen.length, aws.requests.length];
    for (const [body, pattern] of [
      [{ model: 'veo', prompt: 'p', seed: 1 }, /seed/],
      [{ model: 'reel', prompt: 'p', size: '1920x1080' }, /1280x720/],
    ] as const) {
      const refused = await postJson(`${gw.url}/v1/video/generations`, body, auth());
      assert.equal(refused.status, 400, JSON.stringify(refused.body));
      assert.equal(refused.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
      assert.match(refused.body.error.message, pattern);
    }
    assert.deepEqual([gemini.seen.length, aws.requests.length], before);
  });
});
