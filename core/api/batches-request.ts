/**
 * The submit body of POST /v1/batches, checked line by line: every problem with a request line names its
 * custom_id (or its index, when it has none), so a caller with 50,000 lines finds the bad ones. A line's model is
 * resolved as routing resolves a request's, and gateway file ids in its body (`input_file_id`) become the provider's.
 */
import { BATCH_ENDPOINTS, type BatchEndpoint, type BatchLine } from '../dispatch/provider-batches.ts';
import { GatewayError, validationError, type ValidationIssue } from '../errors.ts';
import type { Queryable } from '../store/database.ts';
import { resolveFile } from '../store/files.ts';

export const MAX_BATCH_LINES = 50_000;
/** Reported problems stop here: the first hundred say enough, and the answer stays small. */
const MAX_ISSUES = 100;
const MAX_CUSTOM_ID = 512;
const MAX_METADATA_BYTES = 16 * 1024;

export interface BatchSubmit {
  provider: string;
  endpoint: BatchEndpoint;
  /** Exactly one of the two: the lines of a batch to submit, or the provider's id of a batch to register. */
  requests: unknown[] | null;
  providerBatchId: string | null;
  webhookUrl: string | null;
  metadata: Record<string, unknown> | null;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The body's fields; the lines are checked by checkLines. */
export function submitFields(body: unknown): BatchSubmit {
  if (!isObject(body)) throw validationError([{ path: '', message: 'must be an object' }]);
  const issues: ValidationIssue[] = [];
  const known = new Set(['provider', 'endpoint', 'requests', 'provider_batch_id', 'completion_webhook_url', 'metadata']);
  for (const name of Object.keys(body)) if (!known.has(name)) issues.push({ path: `/${name}`, message: 'is not a field of a batch submission' });
  if (typeof body.provider !== 'string' || body.provider === '') issues.push({ path: '/provider', message: 'must be a provider slug' });
  if (!(BATCH_ENDPOINTS as readonly unknown[]).includes(body.endpoint)) issues.push({ path: '/endpoint', message: `must be one of ${BATCH_ENDPOINTS.join(', ')}` });
  const requests = body.requests;
  const providerBatchId = body.provider_batch_id;
  if ((requests === undefined) === (providerBatchId === undefined)) {
    issues.push({ path: '', message: 'must have exactly one of requests (a batch to submit) and provider_batch_id (a provider batch to register)' });
  } else if (providerBatchId !== undefined) {
    if (typeof providerBatchId !== 'string' || providerBatchId === '' || providerBatchId.length > MAX_CUSTOM_ID) {
      issues.push({ path: '/provider_batch_id', message: `must be the provider's batch id, 1 to ${MAX_CUSTOM_ID} characters` });
    }
  } else if (!Array.isArray(requests) || requests.length < 1 || requests.length > MAX_BATCH_LINES) {
    issues.push({ path: '/requests', message: `must be an array of 1 to ${MAX_BATCH_LINES} request lines` });
  }
  const url = body.completion_webhook_url;
  if (url !== undefined && url !== null && typeof url !== 'string') issues.push({ path: '/completion_webhook_url', message: 'must be a URL' });
  const metadata = body.metadata;
  if (metadata !== undefined && metadata !== null) {
    if (!isObject(metadata)) issues.push({ path: '/metadata', message: 'must be an object' });
    else if (Buffer.byteLength(JSON.stringify(metadata)) > MAX_METADATA_BYTES) issues.push({ path: '/metadata', message: `must be at most ${MAX_METADATA_BYTES} bytes as JSON` });
  }
  if (issues.length > 0) throw validationError(issues);
  return {
    provider: body.provider as string, endpoint: body.endpoint as BatchEndpoint,
    requests: Array.isArray(requests) ? requests : null, providerBatchId: typeof providerBatchId === 'string' ? providerBatchId : null,
    webhookUrl: typeof url === 'string' ? url : null, metadata: (metadata ?? null) as Record<string, unknown> | null,
  };
}

const named = (customId: string | null, index: number) => (customId === null ? `request line ${index}` : `request ${JSON.stringify(customId)}`);

/** The lines' shape, each problem naming its line; the valid lines come back typed. */
export function checkLines(submit: BatchSubmit & { requests: unknown[] }): BatchLine[] {
  const issues: ValidationIssue[] = [];
  const seen = new Map<string, number>();
  const lines: BatchLine[] = [];
  submit.requests.forEach((raw, index) => {
    if (issues.length >= MAX_ISSUES) return;
    const at = `/requests/${index}`;
    if (!isObject(raw)) return void issues.push({ path: at, message: `${named(null, index)}: must be an object {custom_id, method, url, body}` });
    const id = typeof raw.custom_id === 'string' && raw.custom_id.length >= 1 && raw.custom_id.length <= MAX_CUSTOM_ID ? raw.custom_id : null;
    const name = named(id, index);
    const problems: ValidationIssue[] = [];
    if (id === null) problems.push({ path: `${at}/custom_id`, message: `${name}: custom_id must be a string of 1 to ${MAX_CUSTOM_ID} characters` });
    else if (seen.has(id)) problems.push({ path: `${at}/custom_id`, message: `${name}: custom_id is used by request line ${seen.get(id)} too; custom_ids must be unique` });
    else seen.set(id, index);
    for (const field of Object.keys(raw)) {
      if (!['custom_id', 'method', 'url', 'body'].includes(field)) problems.push({ path: `${at}/${field}`, message: `${name}: ${field} is not a field of a request line` });
    }
    if (raw.method !== 'POST') problems.push({ path: `${at}/method`, message: `${name}: method must be POST` });
    if (raw.url !== submit.endpoint) problems.push({ path: `${at}/url`, message: `${name}: url must be the batch's endpoint, ${submit.endpoint}` });
    if (!isObject(raw.body)) problems.push({ path: `${at}/body`, message: `${name}: body must be an object` });
    else if (typeof raw.body.model !== 'string' || raw.body.model === '') problems.push({ path: `${at}/body/model`, message: `${name}: body.model must name a model` });
    if (problems.length > 0) return void issues.push(...problems);
    lines.push({ custom_id: id!, method: 'POST', url: submit.endpoint, body: raw.body as Record<string, unknown> });
  });
  if (issues.length > 0) {
    const shown = issues.slice(0, MAX_ISSUES);
    throw validationError(shown, `${issues.length >= MAX_ISSUES ? `at least ${MAX_ISSUES}` : issues.length} problem(s) in the request lines; the first: ${shown[0]!.message}`);
  }
  return lines;
}

async function translateFileIds(value: unknown, resolve: (id: string) => Promise<string>): Promise<unknown> {
  if (Array.isArray(value)) return Promise.all(value.map((item) => translateFileIds(item, resolve)));
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = key === 'input_file_id' && typeof item === 'string' ? await resolve(item) : await translateFileIds(item, resolve);
  }
  return out;
}

/** A line's model as routing serves it for this caller: the configured model (after overrides) and its upstream name. */
export type ModelResolver = (requested: string) => { modelId: string; upstreamModel: string };

/**
 * Lines as the provider takes them: the model resolved as routing would for this caller (MODEL_NOT_FOUND,
 * MODEL_NOT_ALLOWED, or a model without a target on this provider) and sent as its upstream name,
 * `input_file_id`s translated (404 NOT_FOUND, 400 FILE_PROVIDER_MISMATCH); every error names its line.
 */
export async function providerLines(
  db: Queryable, tenantId: string, provider: string, lines: BatchLine[], resolveModel: ModelResolver, now: number,
): Promise<{ lines: BatchLine[]; model: string }> {
  const resolved = new Map<string, Promise<string>>();
  const out: BatchLine[] = [];
  let first = '';
  for (const [index, line] of lines.entries()) {
    const resolve = (id: string) => {
      if (!resolved.has(id)) resolved.set(id, resolveFile(db, tenantId, id, provider, now));
      return resolved.get(id)!;
    };
    try {
      const model = resolveModel(line.body.model as string);
      first ||= model.modelId;
      // The batch is metered and priced as one piece of work, at one model's prices (OpenAI allows no other).
      if (model.modelId !== first) {
        throw validationError([{ path: `/requests/${index}/body/model`, message: `${named(line.custom_id, index)}: model "${model.modelId}" differs from the batch's model "${first}"; a batch runs one model` }]);
      }
      const body = await translateFileIds(line.body, resolve) as Record<string, unknown>;
      out.push({ ...line, body: { ...body, model: model.upstreamModel } });
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      if (err.code === 'VALIDATION_ERROR') throw err;
      throw new GatewayError(err.code, `${named(line.custom_id, index)}: ${err.message}`, { ...(err.details as object), custom_id: line.custom_id });
    }
  }
  return { lines: out, model: first };
}
