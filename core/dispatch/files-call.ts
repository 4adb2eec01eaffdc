/**
 * Uploads to, deletions from and downloads of a provider's files API (the `files` translator,
 * core/dispatch/provider-files.ts).
 * The file's bytes are a stream the caller is still sending: they go upstream as they arrive, framed as the
 * translator's plan says, with the upstream's back-pressure reaching the caller's socket, and nothing is held
 * whole. Everything runs inside the upstream's breaker; a failure that is the caller's (a body over its limit, a
 * client gone) is reported as that, never as the upstream's.
 */
import { Readable } from 'node:stream';
import { GatewayError } from '../errors.ts';
import { badAnswer, unsupported, type CallDeps } from './exchange.ts';
import { framed, newBoundary, pulled } from './multipart.ts';
import type {
  FilesTranslator, FileUploadInfo, PartsUploadPlan, ProviderDefinition, ProviderTarget, UploadAnswer, UploadedFile, UploadPart, UpstreamRequest,
} from './provider.ts';
import { readBody, readErrorBody, type UpstreamResponse } from './upstream.ts';
import { isAbort, transportError, UpstreamTooLargeError } from './upstream-errors.ts';

/** The provider's files translator, or 400 CAPABILITY_NOT_SUPPORTED before any I/O. */
export function filesTranslatorFor(provider: ProviderDefinition): FilesTranslator {
  if (!provider.capabilities.files || !provider.files) throw unsupported(provider.slug, 'files (it has no files API the gateway uploads to)', { capability: 'files' });
  return provider.files;
}

export interface UploadSource {
  /** The file's bytes as they arrive. */
  bytes: AsyncIterable<Buffer>;
  /** Why the source failed when that is the caller's doing (PAYLOAD_TOO_LARGE, client gone), else undefined. */
  callerFault(): Error | undefined;
}

/** The provider's file, with the byte count the gateway itself streamed. */
export type Uploaded = UploadedFile & { streamedBytes: number };

async function* counting(source: AsyncIterable<Buffer>, count: { bytes: number }): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    count.bytes += chunk.length;
    yield chunk;
  }
}

/**
 * The stream cut into parts of `size` bytes; a part is handed on only once the next byte (or the end) shows
 * whether it is the last, so at most two parts are held. An empty stream is one empty last part.
 */
export async function* partsOf(source: AsyncIterable<Buffer>, size: number): AsyncGenerator<{ bytes: Buffer; last: boolean }> {
  let held: Buffer[] = [];
  let heldBytes = 0;
  let full: Buffer | null = null;
  for await (const chunk of source) {
    let rest = chunk;
    while (rest.length > 0) {
      if (full) {
        yield { bytes: full, last: false };
        full = null;
      }
      const take = Math.min(size - heldBytes, rest.length);
      held.push(rest.subarray(0, take));
      heldBytes += take;
      rest = rest.subarray(take);
      if (heldBytes === size) {
        full = Buffer.concat(held, size);
        held = [];
        heldBytes = 0;
      }
    }
  }
  if (full) yield { bytes: full, last: true };
  else yield { bytes: Buffer.concat(held, heldBytes), last: true };
}

/** A byte stream undici pulls from at its own pace; objectMode off so its buffer is bounded in bytes. */

/**
 * Sends to one provider target outside the chat exchange: authorized, an error answer mapped by the provider (but
 * for `okStatuses`), the caller's own fault reported as that. Uploads and batch storage reads use it.
 */
export class Sender {
  constructor(private readonly deps: CallDeps, private readonly provider: ProviderDefinition, private readonly target: ProviderTarget,
    private readonly signal: AbortSignal, private readonly callerFault: () => Error | undefined = () => undefined) {}

  /** The same sender on another signal: clean-up that must outlive the caller's aborted request. */
  on(signal: AbortSignal): Sender {
    return new Sender(this.deps, this.provider, this.target, signal);
  }

  /** Authorizes and sends; an error answer becomes the provider's mapped error (`okStatuses` excepted). */
  async send(request: UpstreamRequest, body?: Readable, okStatuses: number[] = []): Promise<UpstreamResponse> {
    const { provider, target } = this;
    let response: UpstreamResponse;
    try {
      const authorized = provider.authorize ? await provider.authorize(request, target, this.deps.io, this.signal) : request;
      response = await this.deps.upstream.send(target.baseUrl, authorized, this.signal, body);
    } catch (err) {
      body?.destroy();
      const fault = this.callerFault();
      if (fault) throw fault;
      throw isAbort(err) ? err : transportError(target.slug, err, 'request');
    }
    if (response.statusCode >= 400 && !okStatuses.includes(response.statusCode)) {
      body?.destroy();
      throw provider.mapError(response.statusCode, await readErrorBody(response), target, response.headers);
    }
    return response;
  }

  async answer(response: UpstreamResponse): Promise<UploadAnswer> {
    let bytes: Buffer;
    try {
      bytes = await readBody(response, this.deps.upstream.maxBodyBytes);
    } catch (err) {
      throw isAbort(err) ? err : transportError(this.target.slug, err, 'request');
    }
    return { status: response.statusCode, headers: response.headers, text: bytes.toString('utf8') };
  }

  async json(response: UpstreamResponse): Promise<unknown> {
    const { text } = await this.answer(response);
    try {
      return JSON.parse(text);
    } catch {
      throw badAnswer(this.target, 'an upload answer that is not JSON');
    }
  }
}

/** A `parts` upload: start, each part in turn with its length, then the completion (or the last part's answer). */
async function uploadParts(sender: Sender, plan: PartsUploadPlan, file: AsyncIterable<Buffer>, callerFault: () => Error | undefined): Promise<UploadedFile> {
  const session = await sender.answer(await sender.send(plan.start));
  const answers: Array<UploadAnswer & { part: UploadPart }> = [];
  try {
    let offset = 0;
    for await (const cut of partsOf(file, plan.partBytes)) {
      const part: UploadPart = { index: answers.length, offset, bytes: cut.bytes.length, last: cut.last, total: cut.last ? offset + cut.bytes.length : null };
      const request = plan.part(session, part);
      const sent = await sender.send({ ...request, headers: { ...request.headers, 'content-length': String(part.bytes) }, bodyStreamed: true },
        Readable.from([cut.bytes]), [...(plan.continueStatuses ?? [])]);
      answers.push({ ...(await sender.answer(sent)), part });
      offset += part.bytes;
    }
    const fault = callerFault();
    if (fault) throw fault;
    const final = plan.complete ? await sender.answer(await sender.send(plan.complete(session, answers))) : answers.at(-1)!;
    return plan.finish(session, final);
  } catch (err) {
    // An upload left open holds storage at the provider (S3 keeps unfinished parts): it is closed, best effort.
    if (plan.abort) {
      const abort = plan.abort(session);
      sender.on(AbortSignal.timeout(30_000)).send(abort, undefined, [404]).then((r) => r.body.dump(), () => {}).catch(() => {});
    }
    throw err;
  }
}

/** Streams one file to the provider as its plan says; resolves with the provider's file once it has answered. */
export async function uploadFile(
  deps: CallDeps, provider: ProviderDefinition, target: ProviderTarget, info: FileUploadInfo, source: UploadSource, signal: AbortSignal,
): Promise<Uploaded> {
  const translator = filesTranslatorFor(provider);
  const plan = translator.upload(info, target);
  const sender = new Sender(deps, provider, target, signal, source.callerFault);
  const count = { bytes: 0 };
  const file = counting(source.bytes, count);
  return deps.breakers.run(target.slug, target.baseUrl, async () => {
    if (plan.kind === 'parts') {
      const uploaded = await uploadParts(sender, plan, file, source.callerFault);
      if (!uploaded || typeof uploaded.id !== 'string' || uploaded.id === '') throw badAnswer(target, 'an upload answer without a file id');
      return { ...uploaded, streamedBytes: count.bytes };
    }
    let response: UpstreamResponse;
    if (plan.kind === 'multipart') {
      const boundary = newBoundary();
      const request = { ...plan.request, headers: { ...plan.request.headers, 'content-type': `multipart/form-data; boundary=${boundary}` }, bodyStreamed: true };
      response = await sender.send(request, pulled(framed(boundary, plan.fields, { field: plan.fileField, filename: info.filename, mimeType: info.mimeType }, file)));
    } else {
      const started = await sender.send(plan.start);
      await started.body.dump();
      response = await sender.send({ ...plan.bytes(started.headers), bodyStreamed: true }, pulled(file));
    }
    const fault = source.callerFault();
    if (fault) {
      // The provider answered before the caller's body ended (or despite its failure): that answer is not the file's.
      response.body.destroy();
      throw fault;
    }
    const uploaded = translator.fromUpload(await sender.json(response), target);
    if (!uploaded || typeof uploaded.id !== 'string' || uploaded.id === '') throw badAnswer(target, 'an upload answer without a file id');
    return { ...uploaded, streamedBytes: count.bytes };
  });
}

/** Deletes the provider's file; one the provider no longer has (404) counts as deleted. */
export async function deleteProviderFile(
  deps: CallDeps, provider: ProviderDefinition, target: ProviderTarget, providerFileId: string, signal: AbortSignal,
): Promise<void> {
  const translator = filesTranslatorFor(provider);
  const sender = new Sender(deps, provider, target, signal);
  await deps.breakers.run(target.slug, target.baseUrl, async () => {
    const response = await sender.send(translator.delete(providerFileId, target), undefined, [404]);
    await response.body.dump();
  });
}

/** Whether the gateway can read a file's bytes back from this provider (vector-store ingestion needs them). */
export function canDownload(provider: ProviderDefinition): boolean {
  return Boolean(provider.capabilities.files && provider.files?.download);
}

/**
 * The bytes of the provider's file, held whole: at most `maxBytes` of them. A declared or actual length past the
 * limit drops the connection (the body is destroyed, never drained) and answers 413 PAYLOAD_TOO_LARGE; an abort of
 * `signal` stops the read. A provider that serves no file content is refused with 400 CAPABILITY_NOT_SUPPORTED
 * before any I/O.
 */
export async function downloadFile(
  deps: CallDeps, provider: ProviderDefinition, target: ProviderTarget, providerFileId: string, options: { maxBytes: number; signal: AbortSignal },
): Promise<Buffer> {
  const translator = filesTranslatorFor(provider);
  if (!translator.download) throw unsupported(provider.slug, 'file downloads (its files API does not serve file content)', { capability: 'files', operation: 'download' });
  const request = translator.download(providerFileId, target);
  const sender = new Sender(deps, provider, target, options.signal);
  return deps.breakers.run(target.slug, target.baseUrl, async () => {
    const response = await sender.send(request);
    // Only a 200 carries the whole file: undici follows no redirects, and a 204 or a 3xx body is not its bytes.
    if (response.statusCode !== 200) {
      await response.body.dump().catch(() => {});
      throw badAnswer(target, `a ${response.statusCode} answer to a file download`);
    }
    try {
      return await readBody(response, options.maxBytes);
    } catch (err) {
      if (err instanceof UpstreamTooLargeError) {
        // The caller's limit, not the upstream's failure: it does not count against the breaker.
        throw new GatewayError('PAYLOAD_TOO_LARGE', `File ${providerFileId} at ${target.slug} is larger than the limit of ${options.maxBytes} bytes for a download`,
          { provider: target.slug, limitBytes: options.maxBytes });
      }
      throw isAbort(err) ? err : transportError(target.slug, err, 'request');
    }
  });
}
