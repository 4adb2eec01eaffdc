/**
 * Veo's two wires as the video kit's fake speaks them. Both start a task with POST {model}:predictLongRunning
 * {instances: [{prompt, image?, ...}], parameters: {durationSeconds, aspectRatio, ...}}, answered by a long-running
 * operation {name}; an operation carries no progress, only `done` and then `response` or `error: {code, message}`.
 * Errors are Google's `{error: {code, message, status}}`.
 * - gemini (the Gemini API, `x-goog-api-key`): GET /v1beta/{name} reads the operation; done, its
 *   response.generateVideoResponse.generatedSamples[0].video.uri is a file on the API's own origin
 *   (/v1beta/files/{id}:download?alt=media) that takes the key.
 * - vertex-ai (a Bearer OAuth token, exchanged for a service-account assertion at the key's token_uri): the
 *   operation is read with POST {model}:fetchPredictOperation {operationName}; done, response.videos[0].gcsUri is
 *   the object Veo wrote under the request's storageUri, read through Cloud Storage's JSON API with the token.
 */
import assert from 'node:assert/strict';
import { verify, type KeyObject } from 'node:crypto';
import { assertDocumented } from '../media-wire.ts';
import type { KitTask, VideoWire, VideoWireAnswer, VideoWireRequest } from '../video-wire.ts';

const answer = (body: unknown, status = 200): VideoWireAnswer => ({ status, body: JSON.stringify(body) });
const GOOGLE_STATUS: Record<number, string> = { 400: 'INVALID_ARGUMENT', 404: 'NOT_FOUND', 500: 'INTERNAL' };
const googleError = (status: number, message: string) => answer({ error: { code: status, message, status: GOOGLE_STATUS[status] ?? 'UNKNOWN' } }, status);

const INSTANCE_FIELDS = ['prompt', 'image', 'lastFrame', 'video', 'referenceImages'];
const GEMINI_PARAMETERS = ['aspectRatio', 'durationSeconds', 'negativePrompt', 'personGeneration', 'resolution'];
const VERTEX_PARAMETERS = [...GEMINI_PARAMETERS, 'compressionQuality', 'enhancePrompt', 'generateAudio', 'resizeMode', 'sampleCount', 'seed', 'storageUri'];

/** What a predictLongRunning body asks, its fields checked against the ones the API documents. */
function veoAsked(req: VideoWireRequest, url: RegExp, parameters: string[], provider: string) {
  const match = req.method === 'POST' ? url.exec(req.path) : null;
  if (!match) return null;
  assertDocumented(req.json, ['instances', 'parameters'], provider);
  assert.equal(req.json.instances.length, 1, 'one instance: one prompt');
  assertDocumented(req.json.instances[0], INSTANCE_FIELDS, provider);
  assertDocumented(req.json.parameters ?? {}, parameters, provider);
  const seconds = req.json.parameters?.durationSeconds;
  return { model: decodeURIComponent(match[1]!), prompt: req.json.instances[0].prompt, seconds: typeof seconds === 'number' ? seconds : null };
}

/** The operation as both APIs answer it; `response` is what a done one holds. */
function operation(name: string, task: KitTask, response: () => unknown): VideoWireAnswer {
  if (task.status === 'failed') return answer({ name, done: true, error: { code: 13, message: task.reason ?? 'failed' } });
  if (task.status !== 'completed') return answer({ name });
  return answer({ name, done: true, response: response() });
}

export function geminiVideoWire(): VideoWire {
  const name = (task: KitTask) => `models/${task.model}/operations/${task.id}`;
  return {
    create: (req) => veoAsked(req, /^\/v1beta\/models\/([^/:]+):predictLongRunning$/, GEMINI_PARAMETERS, 'gemini'),
    created: (task) => answer({ name: name(task) }),
    polled(req) {
      const match = req.method === 'GET' ? /^\/v1beta\/models\/[^/]+\/operations\/([^/]+)$/.exec(req.path) : null;
      return match ? decodeURIComponent(match[1]!) : null;
    },
    status: (task, files) => operation(name(task), task, () => ({
      '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse',
      generateVideoResponse: { generatedSamples: [{ video: { uri: `${files}/v1beta/files/${task.id}:download?alt=media` } }] },
    })),
    downloaded(req) {
      const match = req.method === 'GET' ? /^\/v1beta\/files\/([^/:]+):download$/.exec(req.path) : null;
      if (!match) return null;
      assert.equal(req.query.alt, 'media');
      return decodeURIComponent(match[1]!);
    },
    errorBody: googleError,
    assertAuth(req, credential) {
      assert.equal(req.headers['x-goog-api-key'], credential);
      assert.equal(req.headers.authorization, undefined);
      assert.equal(req.query.key, undefined, 'the key travels in its header, not in the URL');
    },
  };
}

export interface VertexVideoWireOptions {
  /** The path under which the project's location lives: /v1/projects/{project}/locations/{location}. */
  basePath: string;
  /** The storageUri the gateway must send: gs://{bucket}/{prefix}. */
  storageUri: string;
  /** The service account's public key, to check the assertion at the token exchange. */
  publicKey: KeyObject;
  /** The token the exchange issues. */
  token: string;
}

export function vertexVideoWire({ basePath, storageUri, publicKey, token }: VertexVideoWireOptions): VideoWire {
  const modelUrl = (method: string) => new RegExp(`^${basePath}/publishers/google/models/([^/:]+):${method}$`);
  const name = (task: KitTask) => `${basePath.replace(/^\/v1\//, '')}/publishers/google/models/${task.model}/operations/${task.id}`;
  const [, bucket, prefix] = /^gs:\/\/([^/]+)\/(.*)$/.exec(storageUri)!;
  const objectName = (task: KitTask) => `${prefix}${task.id}/sample_0.mp4`;
  return {
    route(req) {
      if (req.method !== 'POST' || req.path !== '/token') return null;
      const form = new URLSearchParams(req.body.toString('utf8'));
      assert.equal(form.get('grant_type'), 'urn:ietf:params:oauth:grant-type:jwt-bearer');
      const [header, claims, signature] = (form.get('assertion') ?? '').split('.');
      assert.ok(verify('sha256', Buffer.from(`${header}.${claims}`), publicKey, Buffer.from(signature!, 'base64url')), 'the assertion is signed with the key');
      return answer({ access_token: token, expires_in: 3599, token_type: 'Bearer' });
    },
    create(req) {
      const asked = veoAsked(req, modelUrl('predictLongRunning'), VERTEX_PARAMETERS, 'vertex-ai');
      if (asked) assert.deepEqual([req.json.parameters.storageUri, req.json.parameters.sampleCount], [storageUri, 1], 'one video, written where the operator said');
      return asked;
    },
    created: (task) => answer({ name: name(task) }),
    polled(req) {
      const match = req.method === 'POST' ? modelUrl('fetchPredictOperation').exec(req.path) : null;
      if (!match) return null;
      assertDocumented(req.json, ['operationName'], 'vertex-ai');
      const operationName = String(req.json.operationName);
      assert.ok(operationName.includes(`/models/${match[1]}/operations/`), 'the operation is read through its own model');
      return operationName.split('/').at(-1)!;
    },
    status: (task) => operation(name(task), task, () => ({
      '@type': 'type.googleapis.com/cloud.ai.large_models.vision.GenerateVideoResponse',
      raiMediaFilteredCount: 0,
      videos: [{ gcsUri: `gs://${bucket}/${objectName(task)}`, mimeType: 'video/mp4' }],
    })),
    downloaded(req) {
      const match = req.method === 'GET' ? /^\/storage\/v1\/b\/([^/]+)\/o\/([^/]+)$/.exec(req.path) : null;
      if (!match || decodeURIComponent(match[1]!) !== bucket) return null;
      assert.equal(req.query.alt, 'media');
      const object = decodeURIComponent(match[2]!);
      return object.startsWith(prefix!) ? object.slice(prefix!.length).split('/')[0]! : null;
    },
    errorBody: googleError,
    assertAuth(req, credential) {
      assert.equal(req.headers.authorization, `Bearer ${credential}`);
      assert.equal(req.headers['x-goog-api-key'], undefined);
    },
  };
}
