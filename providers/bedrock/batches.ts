/**
 * Bedrock batch inference (model invocation jobs), polled only: a job made on Bedrock is registered by its ARN.
 * The control plane answers GetModelInvocationJob (`GET /model-invocation-job/{jobIdentifier}`) with the job's
 * status, model and S3 locations, and stops it with StopModelInvocationJob (`POST .../stop`). The results are S3
 * objects under `{outputS3Uri}/{jobId}/`: one `{input file}.out` per input file, whose lines are the records, and
 * `manifest.json.out`, whose counts are the job's final ones. `locateResults` lists them once the job has ended.
 */
import type { BatchCounts, BatchesTranslator, BatchStatus, BatchStorageIO, ProviderBatch, ProviderTarget, UpstreamRequest } from '../../core/dispatch/provider.ts';
import { bedrockResultLine } from './batch-results.ts';
import { controlPlaneUrl } from './endpoints.ts';
import { malformed } from './errors.ts';
import { getObject, listedPage, listObjects, parseS3Uri, s3Uri, type ListedObject, type S3Location } from './s3.ts';
import { uriEncode } from './sigv4.ts';

/** Submitted, Validating and Scheduled have not started; Stopping is still running for the gateway. */
const STATUSES: Record<string, BatchStatus> = {
  Submitted: 'validating', Validating: 'validating', Scheduled: 'validating',
  InProgress: 'in_progress', Stopping: 'in_progress',
  Completed: 'completed', PartiallyCompleted: 'completed',
  Failed: 'failed', Stopped: 'cancelled', Expired: 'expired',
};

export const MANIFEST = 'manifest.json.out';
/** A listing longer than this many pages (a million objects) is no job's output. */
const MAX_PAGES = 1000;

/** The job as fromBatch reads it: its S3 locations travel with it to locateResults (plain JSON). */
export interface BedrockJob extends ProviderBatch {
  inputS3Uri: string | null;
  outputS3Uri: string | null;
}

interface JobAnswer {
  jobArn?: unknown;
  status?: unknown;
  modelId?: unknown;
  inputDataConfig?: { s3InputDataConfig?: { s3Uri?: unknown } };
  outputDataConfig?: { s3OutputDataConfig?: { s3Uri?: unknown } };
  totalRecordCount?: unknown;
  successRecordCount?: unknown;
  errorRecordCount?: unknown;
}

const count = (value: unknown) => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0);
const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);
const jobPath = (target: ProviderTarget, job: string) => `${controlPlaneUrl(target)}/model-invocation-job/${uriEncode(job)}`;

/** `arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/abc123def456` -> `abc123def456`, the output folder. */
export const jobIdOf = (arn: string) => arn.slice(arn.lastIndexOf('/') + 1);

const records = (total: unknown, success: unknown, error: unknown): BatchCounts => ({ total: count(total), completed: count(success), failed: count(error) });

function fromJob(body: unknown, target: ProviderTarget): BedrockJob {
  const job = body as JobAnswer | null;
  const status = typeof job?.status === 'string' && Object.hasOwn(STATUSES, job.status) ? STATUSES[job.status]! : undefined;
  const arn = text(job?.jobArn);
  if (!arn || !status) throw malformed(target, 'model invocation job (no jobArn or an unknown status)');
  return {
    id: arn, status,
    // Jobs report record counts as they run (totalRecordCount, ...); the manifest's replace them at the end.
    counts: records(job!.totalRecordCount, job!.successRecordCount, job!.errorRecordCount),
    outputFileId: null, errorFileId: null,
    model: text(job!.modelId),
    inputS3Uri: text(job!.inputDataConfig?.s3InputDataConfig?.s3Uri),
    outputS3Uri: text(job!.outputDataConfig?.s3OutputDataConfig?.s3Uri),
  };
}

/** Every object under the prefix, following continuation tokens. */
async function listAll(target: ProviderTarget, io: BatchStorageIO, bucket: string, prefix: string): Promise<ListedObject[]> {
  const objects: ListedObject[] = [];
  let token: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await io.text(listObjects(target, bucket, prefix, token));
    if (answer === null) return objects; // no such bucket: nothing was written
    const listed = listedPage(target, answer);
    objects.push(...listed.objects);
    if (listed.next === null) return objects;
    token = listed.next;
  }
  throw malformed(target, `ListObjectsV2 answer (more than ${MAX_PAGES} pages under ${prefix})`);
}

async function manifestCounts(target: ProviderTarget, io: BatchStorageIO, location: S3Location): Promise<BatchCounts | null> {
  const answer = await io.text(getObject(target, location));
  if (answer === null) return null;
  let manifest: { totalRecordCount?: unknown; successRecordCount?: unknown; errorRecordCount?: unknown } | null;
  try {
    manifest = JSON.parse(answer) as typeof manifest;
  } catch {
    throw malformed(target, `${MANIFEST} (not JSON)`);
  }
  if (!manifest || typeof manifest !== 'object') throw malformed(target, `${MANIFEST} (not an object)`);
  return records(manifest.totalRecordCount, manifest.successRecordCount, manifest.errorRecordCount);
}

/** The output location of a job that did not carry it here: asked of the control plane again. */
async function outputUriOf(batch: ProviderBatch, target: ProviderTarget, io: BatchStorageIO): Promise<string | null> {
  const carried = (batch as Partial<BedrockJob>).outputS3Uri;
  if (carried !== undefined) return carried;
  const answer = await io.text(bedrockBatches.status(batch.id, target));
  if (answer === null) return null;
  let body: unknown;
  try {
    body = JSON.parse(answer);
  } catch {
    throw malformed(target, 'model invocation job (not JSON)');
  }
  return fromJob(body, target).outputS3Uri;
}

const baseName = (key: string) => key.slice(key.lastIndexOf('/') + 1);

export const bedrockBatches: BatchesTranslator = {
  // InvokeModel and Converse jobs: the records' bodies are chat or embeddings requests in the model's own shape.
  endpoints: ['/v1/chat/completions', '/v1/embeddings'],
  status: (job, target) => ({ method: 'GET', path: jobPath(target, job), headers: {} }),
  cancel: (job, target) => ({ method: 'POST', path: `${jobPath(target, job)}/stop`, headers: {} }),
  fromBatch: fromJob,
  async locateResults(batch, target, io) {
    const output = await outputUriOf(batch, target, io);
    const location = output === null ? null : parseS3Uri(output);
    if (output !== null && !location) throw malformed(target, `model invocation job (output location ${JSON.stringify(output)} is not s3://bucket/prefix)`);
    if (!location) return { ...batch, outputFileId: null, errorFileId: null, resultFileIds: [], fileInfo: {} };
    const folder = location.key.replace(/\/+$/, '');
    const prefix = `${folder === '' ? '' : `${folder}/`}${jobIdOf(batch.id)}/`;
    const objects = await listAll(target, io, location.bucket, prefix);
    const results = objects.filter((o) => o.key.endsWith('.out') && baseName(o.key) !== MANIFEST);
    const manifest = objects.find((o) => o.key === `${prefix}${MANIFEST}`);
    const counts = manifest ? await manifestCounts(target, io, { bucket: location.bucket, key: manifest.key }) : null;
    const ids = results.map((o) => s3Uri({ bucket: location.bucket, key: o.key }));
    return {
      ...batch,
      counts: counts ?? batch.counts,
      // Successes and errors are lines of the same objects: no error file.
      outputFileId: ids[0] ?? null, errorFileId: null,
      resultFileIds: ids,
      fileInfo: Object.fromEntries(results.map((o, i) => [ids[i]!, { bytes: o.bytes, filename: baseName(o.key) }])),
    };
  },
  results(batch, target) {
    const ids = batch.resultFileIds ?? (batch.outputFileId === null ? [] : [batch.outputFileId]);
    const requests: UpstreamRequest[] = [];
    for (const id of ids) {
      const location = parseS3Uri(id);
      if (!location) throw malformed(target, `result file id ${JSON.stringify(id)} (not s3://bucket/key)`);
      requests.push(getObject(target, location));
    }
    return requests.length === 0 ? null : requests;
  },
  resultLine: bedrockResultLine,
};
