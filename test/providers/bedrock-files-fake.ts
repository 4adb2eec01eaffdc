/**
 * The AWS side of Bedrock's files and batches on one loopback server: S3 under /s3 (path-style, XML answers:
 * CreateMultipartUpload, UploadPart, CompleteMultipartUpload, AbortMultipartUpload, GetObject, DeleteObject,
 * ListObjectsV2 with encoding-type=url and continuation tokens) and the Bedrock control plane under /bedrock
 * (GetModelInvocationJob, StopModelInvocationJob). Every request's SigV4 signature is checked as AWS checks it,
 * by a verifier written here apart from the gateway's signer: service `s3` under /s3 (the path encoded once, the
 * payload hash required) and `bedrock` under /bedrock (the path normalized and encoded twice). A request that
 * fails the check is answered 403 and recorded with the reason. Object bodies are written in pieces cut at
 * awkward places, so that readers meet lines split across chunks.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { XMLParser } from 'fast-xml-parser';

export const ACCESS_KEY = 'AKIDBEDROCKFILESTEST';
export const SECRET = 'bedrock/files+secret/EXAMPLEKEY';
export const REGION = 'eu-west-3';
const MIN_PART = 5 * 1024 * 1024;

export interface Received {
  method: string;
  /** The raw request target, path and query as sent. */
  url: string;
  service: 's3' | 'bedrock';
  /** Null when the signature verified; otherwise why not. */
  problem: string | null;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export interface Upload { bucket: string; key: string; contentType: string | undefined; parts: Map<number, { bytes: Buffer; etag: string }> }

export interface FakeJob {
  arn: string;
  status: string;
  modelId: string;
  inputUri: string;
  outputUri: string;
  /** Record counts the job reports while it runs (absent: none reported). */
  counts?: { totalRecordCount: number; successRecordCount: number; errorRecordCount: number };
}

export interface FakeAws {
  origin: string;
  requests: Received[];
  /** `bucket/key` -> bytes. */
  objects: Map<string, Buffer>;
  uploads: Map<string, Upload>;
  jobs: Map<string, FakeJob>;
  /** Objects per ListObjectsV2 page: small, so listings need continuation tokens. */
  pageSize: number;
  /** The next CompleteMultipartUpload answers 200 with this S3 error inside, as S3 may. */
  failNextComplete: string | null;
  /** The runtime (every path outside /s3 and /bedrock), for tests of its models: the request's signature is checked first. */
  runtime: ((received: Received, res: ServerResponse) => void) | null;
  createJob(fields: Omit<FakeJob, 'arn' | 'status'> & { status?: string }): FakeJob;
  /** The first recorded request `match` accepts, now or when it arrives; rejects when none has within `timeoutMs`. */
  waitFor(match: (r: Received) => boolean, timeoutMs?: number): Promise<Received>;
  close(): Promise<void>;
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
const rfc3986 = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const decoded = (text: string) => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

function canonicalQuery(raw: string): string {
  return raw.split('&').filter(Boolean).map((pair) => {
    const at = pair.indexOf('=');
    const [name, value] = at === -1 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
    return [rfc3986(decoded(name)), rfc3986(decoded(value))] as const;
  }).sort(([an, av], [bn, bv]) => (an === bn ? (av < bv ? -1 : 1) : an < bn ? -1 : 1)).map(([n, v]) => `${n}=${v}`).join('&');
}

/** S3 encodes the path once and resolves nothing; every other service normalizes it and encodes it again. */
function canonicalPath(rawPath: string, service: string): string {
  if (service === 's3') return rawPath.split('/').map((s) => rfc3986(decoded(s))).join('/');
  const segments: string[] = [];
  for (const s of rawPath.split('/')) {
    if (s === '' || s === '.') continue;
    if (s === '..') segments.pop();
    else segments.push(s);
  }
  return `/${segments.map(rfc3986).join('/')}${rawPath.endsWith('/') && segments.length > 0 ? '/' : ''}`;
}

/** Null when the request's SigV4 signature verifies for `service`, else why not (the conformance kit checks with it too). */
export function verify(req: Pick<IncomingMessage, 'method' | 'url' | 'headers'>, body: Buffer, service: 's3' | 'bedrock'): string | null {
  const auth = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(String(req.headers.authorization));
  if (!auth) return 'IncompleteSignature';
  const [, keyId, day, region, signedService, signedList, signature] = auth as unknown as string[];
  if (keyId !== ACCESS_KEY) return 'InvalidAccessKeyId';
  if (region !== REGION || signedService !== service) return `scope ${region}/${signedService} is not ${REGION}/${service}`;
  const date = String(req.headers['x-amz-date'] ?? '');
  if (!date.startsWith(day!)) return 'x-amz-date does not match the scope';
  const signedAt = Date.UTC(+date.slice(0, 4), +date.slice(4, 6) - 1, +date.slice(6, 8), +date.slice(9, 11), +date.slice(11, 13), +date.slice(13, 15));
  if (Math.abs(Date.now() - signedAt) > 5 * 60_000) return 'RequestTimeTooSkewed';
  const signed = signedList!.split(';');
  const required = ['host', 'x-amz-date', ...(service === 's3' ? ['x-amz-content-sha256'] : [])];
  for (const name of required) if (!signed.includes(name)) return `${name} is not signed`;
  const declared = req.headers['x-amz-content-sha256'];
  if (service === 's3' && declared === undefined) return 'MissingContentSHA256';
  if (declared !== undefined && declared !== 'UNSIGNED-PAYLOAD' && declared !== sha256(body)) return 'XAmzContentSHA256Mismatch';
  const payload = declared === 'UNSIGNED-PAYLOAD' ? 'UNSIGNED-PAYLOAD' : sha256(body);
  const [rawPath, rawQuery = ''] = req.url!.split('?', 2) as [string, string?];
  const headers = signed.map((name) => `${name}:${String(req.headers[name] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonical = [req.method, canonicalPath(rawPath, service), canonicalQuery(rawQuery), headers, signed.join(';'), payload].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${SECRET}`, day!), region!), service), 'aws4_request');
  const expected = createHmac('sha256', key).update(['AWS4-HMAC-SHA256', date, `${day}/${region}/${service}/aws4_request`, sha256(canonical)].join('\n')).digest();
  return timingSafeEqual(expected, Buffer.from(signature!, 'hex')) ? null : 'SignatureDoesNotMatch';
}

const xml = (res: ServerResponse, status: number, text: string) =>
  void res.writeHead(status, { 'content-type': 'application/xml' }).end(`<?xml version="1.0" encoding="UTF-8"?>\n${text}`);
const s3Error = (res: ServerResponse, status: number, code: string, message: string) =>
  xml(res, status, `<Error><Code>${code}</Code><Message>${message}</Message><RequestId>4442587FB7D0A2F9</RequestId></Error>`);
const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
/** encoding-type=url: keys form-encoded, a space as `+`. */
const listedKey = (key: string) => encodeURIComponent(key).replace(/%20/g, '+');

/** The body in pieces of 1, 7, 64 and 3 bytes, over and over, each flushed before the next. */
async function writeAwkwardly(res: ServerResponse, bytes: Buffer): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length), etag: `"${createHash('md5').update(bytes).digest('hex')}"` });
  const sizes = [1, 7, 64, 3];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const piece = bytes.subarray(at, at + sizes[i % sizes.length]!);
    at += piece.length;
    await new Promise<void>((resolve) => res.write(piece, () => resolve()));
  }
  res.end();
}

const xmlParser = new XMLParser({ parseTagValue: false, ignoreAttributes: true, ignoreDeclaration: true });

export async function startFakeAws(): Promise<FakeAws> {
  const requests: Received[] = [];
  const objects = new Map<string, Buffer>();
  const uploads = new Map<string, Upload>();
  const jobs = new Map<string, FakeJob>();
  const events = new EventEmitter();

  function s3(req: IncomingMessage, res: ServerResponse, body: Buffer, rawPath: string, query: URLSearchParams): void | Promise<void> {
    const segments = rawPath.split('/').map(decoded);
    const bucket = segments[0]!;
    const key = segments.slice(1).join('/');
    const id = `${bucket}/${key}`;
    if (key === '' && req.method === 'GET' && query.get('list-type') === '2') {
      const prefix = query.get('prefix') ?? '';
      const all = [...objects.keys()].filter((k) => k.startsWith(`${bucket}/${prefix}`)).map((k) => k.slice(bucket.length + 1)).sort();
      const start = query.has('continuation-token') ? Number(Buffer.from(query.get('continuation-token')!, 'base64').toString().slice(5)) : 0;
      const page = all.slice(start, start + fake.pageSize);
      const truncated = start + page.length < all.length;
      const encode = query.get('encoding-type') === 'url' ? listedKey : esc;
      const contents = page.map((k) => `<Contents><Key>${encode(k)}</Key><LastModified>2025-01-01T00:00:00.000Z</LastModified><ETag>&quot;0&quot;</ETag><Size>${objects.get(`${bucket}/${k}`)!.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`).join('');
      const next = truncated ? `<NextContinuationToken>${Buffer.from(`page=${start + page.length}`).toString('base64')}</NextContinuationToken>` : '';
      return xml(res, 200, `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${bucket}</Name><Prefix>${encode(prefix)}</Prefix><KeyCount>${page.length}</KeyCount><MaxKeys>${fake.pageSize}</MaxKeys><IsTruncated>${truncated}</IsTruncated>${contents}${next}</ListBucketResult>`);
    }
    if (req.method === 'POST' && query.has('uploads')) {
      const uploadId = `VXBsb2Fk.${randomBytes(12).toString('hex')}-_~`;
      uploads.set(uploadId, { bucket, key, contentType: req.headers['content-type'], parts: new Map() });
      return xml(res, 200, `<InitiateMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>${bucket}</Bucket><Key>${esc(key)}</Key><UploadId>${uploadId}</UploadId></InitiateMultipartUploadResult>`);
    }
    const uploadId = query.get('uploadId');
    if (uploadId !== null) {
      const upload = uploads.get(uploadId);
      if (!upload || upload.bucket !== bucket || upload.key !== key) return s3Error(res, 404, 'NoSuchUpload', 'The specified upload does not exist.');
      if (req.method === 'PUT') {
        const number = Number(query.get('partNumber'));
        if (!Number.isInteger(number) || number < 1 || number > 10_000) return s3Error(res, 400, 'InvalidArgument', 'Part number must be an integer between 1 and 10000');
        if (Number(req.headers['content-length']) !== body.length) return s3Error(res, 400, 'IncompleteBody', 'The request body terminated unexpectedly');
        const etag = `"${createHash('md5').update(body).digest('hex')}"`;
        upload.parts.set(number, { bytes: body, etag });
        return void res.writeHead(200, { etag }).end();
      }
      if (req.method === 'DELETE') {
        uploads.delete(uploadId);
        return void res.writeHead(204).end();
      }
      if (req.method === 'POST') {
        const listed = (xmlParser.parse(body.toString('utf8')) as { CompleteMultipartUpload?: { Part?: unknown } }).CompleteMultipartUpload?.Part;
        const parts = (Array.isArray(listed) ? listed : listed ? [listed] : []) as Array<{ PartNumber: string; ETag: string }>;
        if (parts.length === 0) return s3Error(res, 400, 'MalformedXML', 'The XML you provided was not well-formed');
        for (const [i, p] of parts.entries()) {
          const stored = upload.parts.get(Number(p.PartNumber));
          if (!stored || stored.etag !== p.ETag) return s3Error(res, 400, 'InvalidPart', 'One or more of the specified parts could not be found.');
          if (i > 0 && Number(p.PartNumber) <= Number(parts[i - 1]!.PartNumber)) return s3Error(res, 400, 'InvalidPartOrder', 'The list of parts was not in ascending order.');
          if (i < parts.length - 1 && stored.bytes.length < MIN_PART) return s3Error(res, 400, 'EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed object size.');
        }
        if (fake.failNextComplete) {
          const code = fake.failNextComplete;
          fake.failNextComplete = null;
          // The status went out before the failure: 200, whitespace, then the error.
          res.writeHead(200, { 'content-type': 'application/xml' });
          return void res.end(`\n   \n<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>We encountered an internal error. Please try again.</Message></Error>`);
        }
        objects.set(id, Buffer.concat(parts.map((p) => upload.parts.get(Number(p.PartNumber))!.bytes)));
        uploads.delete(uploadId);
        res.writeHead(200, { 'content-type': 'application/xml' });
        return void res.end(`  \n<?xml version="1.0" encoding="UTF-8"?>\n<CompleteMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Location>http://fake/${id}</Location><Bucket>${bucket}</Bucket><Key>${esc(key)}</Key><ETag>&quot;x-${parts.length}&quot;</ETag></CompleteMultipartUploadResult>`);
      }
    }
    if (req.method === 'DELETE' && key !== '') {
      objects.delete(id);
      return void res.writeHead(204).end();
    }
    if (req.method === 'GET' && key !== '') {
      const bytes = objects.get(id);
      if (!bytes) return s3Error(res, 404, 'NoSuchKey', 'The specified key does not exist.');
      return writeAwkwardly(res, bytes);
    }
    s3Error(res, 400, 'InvalidRequest', `fake: no S3 route ${req.method} ${req.url}`);
  }

  function controlPlane(req: IncomingMessage, res: ServerResponse, rawPath: string): void {
    const match = /^model-invocation-job\/([^/]+)(\/stop)?$/.exec(rawPath);
    const identifier = match ? decoded(match[1]!) : '';
    const job = [...jobs.values()].find((j) => j.arn === identifier || j.arn.endsWith(`/${identifier}`));
    if (!match || !job) {
      res.writeHead(404, { 'content-type': 'application/json', 'x-amzn-errortype': 'ResourceNotFoundException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
      return void res.end(JSON.stringify({ message: `The specified job ${identifier} was not found.` }));
    }
    if (match[2] && req.method === 'POST') {
      if (['Submitted', 'Validating', 'Scheduled', 'InProgress'].includes(job.status)) job.status = 'Stopping';
      // Documented as an HTTP 200 with an empty body.
      return void res.writeHead(200).end();
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({
      jobArn: job.arn, jobName: 'outside-the-gateway', modelId: job.modelId, roleArn: 'arn:aws:iam::123456789012:role/BatchRole',
      status: job.status, submitTime: '2025-01-01T00:00:00Z', lastModifiedTime: '2025-01-01T00:01:00Z', timeoutDurationInHours: 24,
      inputDataConfig: { s3InputDataConfig: { s3Uri: job.inputUri, s3InputFormat: 'JSONL' } },
      outputDataConfig: { s3OutputDataConfig: { s3Uri: job.outputUri } },
      ...(job.counts ?? {}),
    }));
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const [rawPath, rawQuery = ''] = req.url!.split('?', 2) as [string, string?];
      const service = rawPath.startsWith('/s3/') ? 's3' : 'bedrock';
      const received: Received = { method: req.method!, url: req.url!, service, problem: verify(req, body, service), headers: req.headers, body };
      requests.push(received);
      events.emit('request', received);
      if (received.problem) {
        if (service === 's3') return s3Error(res, 403, 'SignatureDoesNotMatch', received.problem);
        res.writeHead(403, { 'content-type': 'application/json', 'x-amzn-errortype': 'InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/' });
        return void res.end(JSON.stringify({ message: received.problem }));
      }
      if (service === 's3') return void s3(req, res, body, rawPath.slice('/s3/'.length), new URLSearchParams(rawQuery));
      if (rawPath.startsWith('/bedrock/')) return controlPlane(req, res, rawPath.slice('/bedrock/'.length));
      if (fake.runtime) return fake.runtime(received, res);
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const fake: FakeAws = {
    origin, requests, objects, uploads, jobs, pageSize: 2, failNextComplete: null, runtime: null,
    createJob(fields) {
      const job: FakeJob = { status: 'Submitted', ...fields, arn: `arn:aws:bedrock:${REGION}:123456789012:model-invocation-job/${randomBytes(6).toString('hex')}` };
      jobs.set(job.arn, job);
      return job;
    },
    waitFor(match, timeoutMs = 10_000) {
      const seen = requests.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const listener = (r: Received) => {
          if (!match(r)) return;
          clearTimeout(timer);
          events.off('request', listener);
          resolve(r);
        };
        const timer = setTimeout(() => {
          events.off('request', listener);
          reject(new Error(`fake AWS: no such request within ${timeoutMs} ms; received ${requests.map((r) => `${r.method} ${r.url}`).join(', ')}`));
        }, timeoutMs);
        events.on('request', listener);
      });
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  return fake;
}
