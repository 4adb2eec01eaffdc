/**
 * Bedrock's asynchronous invocations (Nova Reel) as the video kit's fake speaks them: StartAsyncInvoke (POST
 * /async-invoke {modelId, modelInput: {taskType, textToVideoParams | multiShotAutomatedParams,
 * videoGenerationConfig: {durationSeconds, fps, dimension, seed}}, outputDataConfig: {s3OutputDataConfig: {s3Uri}}})
 * -> {invocationArn}; GetAsyncInvoke (GET /async-invoke/{invocationArn}, the ARN one path segment) -> {status:
 * InProgress | Completed | Failed, failureMessage, outputDataConfig: {s3OutputDataConfig: {s3Uri}}}, no progress,
 * queued and running alike. The video is {s3Uri}/output.mp4 (s3Uri the invocation's folder under the one asked),
 * read with S3's GetObject, path-style under /s3. Every request is SigV4-signed (service bedrock, or s3 for the
 * object) and checked as AWS checks it. Errors are {message} with the type in x-amzn-errortype.
 */
import assert from 'node:assert/strict';
import { REGION, verify } from '../../providers/bedrock-files-fake.ts';
import { assertDocumented } from '../media-wire.ts';
import type { KitTask, VideoWire, VideoWireAnswer } from '../video-wire.ts';

const answer = (body: unknown, status = 200, headers: Record<string, string> = {}): VideoWireAnswer => ({ status, headers, body: JSON.stringify(body) });
const AMAZON_ERROR: Record<number, string> = { 400: 'ValidationException', 404: 'ResourceNotFoundException', 500: 'InternalServerException' };
const STATUS = { queued: 'InProgress', in_progress: 'InProgress', completed: 'Completed', failed: 'Failed' } as const;
const MODEL_INPUT = ['taskType', 'textToVideoParams', 'multiShotAutomatedParams', 'multiShotManualParams', 'videoGenerationConfig'];
const ACCOUNT = '123456789012';

/** An invocation id is 12 of [a-z0-9]; the kit's task_xxxxxx (six hex digits) maps onto one and back. */
const invocationId = (task: KitTask) => `kitinv${task.id.slice('task_'.length)}`;
const taskOf = (id: string) => `task_${id.slice('kitinv'.length)}`;
const arn = (task: KitTask) => `arn:aws:bedrock:${REGION}:${ACCOUNT}:async-invoke/${invocationId(task)}`;

/** `outputS3Uri` is where the gateway must ask Nova Reel to write: s3://{bucket}/{prefix}. */
export function bedrockVideoWire(outputS3Uri: string): VideoWire {
  const [, bucket, prefix] = /^s3:\/\/([^/]+)\/(.*)$/.exec(outputS3Uri)!;
  return {
    create(req) {
      if (req.method !== 'POST' || req.path !== '/async-invoke') return null;
      assertDocumented(req.json, ['clientRequestToken', 'modelId', 'modelInput', 'outputDataConfig', 'tags'], 'bedrock');
      assertDocumented(req.json.modelInput, MODEL_INPUT, 'bedrock');
      assert.deepEqual(req.json.outputDataConfig, { s3OutputDataConfig: { s3Uri: outputS3Uri } });
      const input = req.json.modelInput;
      const seconds = input.videoGenerationConfig?.durationSeconds;
      return { model: req.json.modelId, prompt: (input.textToVideoParams ?? input.multiShotAutomatedParams)?.text, seconds: typeof seconds === 'number' ? seconds : null };
    },
    created: (task) => answer({ invocationArn: arn(task) }),
    polled(req) {
      const match = req.method === 'GET' ? /^\/async-invoke\/([^/]+)$/.exec(req.path) : null;
      if (!match) return null;
      const id = /:async-invoke\/([a-z0-9]{12})$/.exec(decodeURIComponent(match[1]!))?.[1];
      return id ? taskOf(id) : null;
    },
    status: (task) => answer({
      invocationArn: arn(task), modelArn: `arn:aws:bedrock:${REGION}::foundation-model/${task.model}`, status: STATUS[task.status],
      submitTime: '2026-01-01T00:00:00Z', lastModifiedTime: '2026-01-01T00:00:30Z',
      outputDataConfig: { s3OutputDataConfig: { s3Uri: `s3://${bucket}/${prefix}${invocationId(task)}` } },
      ...(task.status === 'completed' || task.status === 'failed' ? { endTime: '2026-01-01T00:01:00Z' } : {}),
      ...(task.status === 'failed' ? { failureMessage: task.reason ?? 'failed' } : {}),
    }),
    downloaded(req) {
      const match = req.method === 'GET' ? /^\/s3\/([^/]+)\/(.+)\/output\.mp4$/.exec(req.path) : null;
      if (!match || match[1] !== bucket || !match[2]!.startsWith(prefix!)) return null;
      return taskOf(match[2]!.slice(prefix!.length));
    },
    errorBody: (status, message) => answer({ message }, status, { 'x-amzn-errortype': `${AMAZON_ERROR[status] ?? 'InternalServerException'}:http://internal.amazon.com/coral/com.amazon.bedrock/` }),
    assertAuth(req, credential) {
      const service = req.path.startsWith('/s3/') ? 's3' : 'bedrock';
      assert.equal(verify({ method: req.method, url: req.url, headers: req.headers }, req.body, service), null, `${req.method} ${req.url} is signed for ${service}`);
      assert.match(String(req.headers.authorization), new RegExp(`Credential=${credential}/`));
    },
  };
}
