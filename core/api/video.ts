/**
 * GET /v1/video/generations/:id and /:id/content (capability `video-generation`): a video job as the `video.poll`
 * sweep last saw it, and its video. Jobs are the tenant's: another tenant's id is 404 like an unknown one.
 *
 * A completed job's `url` is the provider's own URL when anyone may fetch it; when fetching it needs the
 * provider's credential, it is this job's content route (built on server.publicUrl, else the request's scheme and
 * Host), where the gateway fetches the video with its credential and streams it to the caller as it arrives,
 * never holding it whole. The content route of a job with a public URL redirects there.
 */
import { Readable } from 'node:stream';
import { exchange } from '../dispatch/exchange.ts';
import { passthroughTargets } from '../dispatch/passthrough.ts';
import { isAbort, transportError } from '../dispatch/upstream-errors.ts';
import type { ProviderTarget, UpstreamRequest } from '../dispatch/provider.ts';
import { discardBody, type UpstreamResponse } from '../dispatch/upstream.ts';
import { GatewayError } from '../errors.ts';
import type { LocalEndpoint, LocalEndpointDeps } from '../ingress/endpoint.ts';
import { videoJobSchema } from '../ingress/schemas/video.ts';
import type { GatewayContext, GatewayMiddleware } from '../pipeline/context.ts';
import { callerOf } from '../pipeline/recorded-caller.ts';
import { findVideoJob, videoJobObject, type VideoJobRecord } from '../store/video-jobs.ts';

const ROUTE = '/v1/video/generations';

const idOf = (ctx: GatewayContext) => (ctx as GatewayContext & { params: { id: string } }).params.id;
const notFound = (id: string) => new GatewayError('NOT_FOUND', `No video job ${id}`, { id });

/** The gateway's address as the caller reaches it: server.publicUrl, else the request's scheme and Host. */
function gatewayBase(deps: LocalEndpointDeps, ctx: GatewayContext): string {
  const configured = deps.config.server.publicUrl;
  return configured ? configured.replace(/\/+$/, '') : `${ctx.protocol}://${ctx.host}`;
}

export const contentUrl = (base: string, id: string) => `${base}${ROUTE}/${encodeURIComponent(id)}/content`;

async function tenantJob(deps: LocalEndpointDeps, ctx: GatewayContext): Promise<VideoJobRecord> {
  const job = await findVideoJob(deps.db, callerOf(ctx).tenantId, idOf(ctx));
  if (!job) throw notFound(idOf(ctx));
  return job;
}

function fetchHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    const job = await tenantJob(deps, ctx);
    ctx.body = videoJobObject(job, contentUrl(gatewayBase(deps, ctx), job.id));
  };
}

/** A type that says nothing about the video (S3's default, an error page's): the translator's or video/mp4 instead. */
const GENERIC_TYPE = /^(application\/(octet-stream|json)|binary\/octet-stream|text\/)/i;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 3;

/**
 * A provider's download link may redirect to its file host (Gemini's does). Followed at most MAX_REDIRECTS times;
 * the download's headers (its credential) go only to the origin they were made for.
 */
async function followRedirects(deps: LocalEndpointDeps, target: ProviderTarget, download: UpstreamRequest, first: UpstreamResponse, signal: AbortSignal): Promise<UpstreamResponse> {
  let response = first;
  let url = new URL(/^https?:\/\//i.test(download.path) ? download.path : `${target.baseUrl.replace(/\/+$/, '')}${download.path}`);
  const origin = url.origin;
  for (let hops = 0; REDIRECTS.has(response.statusCode); hops++) {
    const location = response.headers.location;
    discardBody(response);
    if (hops === MAX_REDIRECTS || typeof location !== 'string') {
      throw new GatewayError('UPSTREAM_ERROR', `${target.slug} redirected the video download ${hops === MAX_REDIRECTS ? 'too many times' : 'without a Location'}`, { provider: target.slug });
    }
    url = new URL(location, url);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new GatewayError('UPSTREAM_ERROR', `${target.slug} redirected the video download to a ${url.protocol} URL`, { provider: target.slug });
    const headers = url.origin === origin ? download.headers : {};
    try {
      response = await deps.upstream.send(url.origin, { method: 'GET', path: url.href, headers }, signal);
    } catch (err) {
      throw isAbort(err) ? err : transportError(target.slug, err, 'request');
    }
    if (response.statusCode >= 400) {
      discardBody(response);
      throw new GatewayError('UPSTREAM_ERROR', `${target.slug}'s video host answered ${response.statusCode}`, { provider: target.slug, upstreamStatus: response.statusCode });
    }
  }
  return response;
}

function contentHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    const job = await tenantJob(deps, ctx);
    if (job.status !== 'completed' || job.resultUrl === null) {
      throw new GatewayError('NOT_FOUND', `Video job ${job.id} has no video (status ${job.status})`, { id: job.id, status: job.status });
    }
    if (!job.needsCredential) return void ctx.redirect(job.resultUrl);
    const entry = passthroughTargets(deps.config, deps.providers).get(job.provider);
    const translator = entry?.provider.video;
    if (!entry || !translator?.download) {
      throw new GatewayError('UPSTREAM_UNAVAILABLE', `The provider ${job.provider} of video job ${job.id} is no longer configured on the gateway`, { provider: job.provider });
    }
    const target = { ...entry.target, upstreamModel: job.upstreamModel };
    const signal = ctx.state.gw.signal;
    const download = translator.download(job.providerTaskId, job.resultUrl, target);
    const answer = await exchange(deps, entry.provider, target, download, { stream: true }, signal);
    if (!('stream' in answer)) throw new Error('a video download returned no stream');
    const response = await followRedirects(deps, target, download, answer.stream, signal);
    const body = response.body as Readable;
    // Headers are gone by then: a provider that breaks midway can only cut the connection.
    body.once('error', (err) => {
      if (!signal.aborted && !isAbort(err)) deps.breakers.countFailure(target.slug, target.baseUrl, transportError(target.slug, err, 'stream'));
      ctx.res.destroy();
    });
    ctx.status = 200;
    const type = response.headers['content-type'];
    ctx.set('Content-Type', typeof type === 'string' && !GENERIC_TYPE.test(type) ? type : job.resultContentType ?? 'video/mp4');
    const length = response.headers['content-length'];
    if (typeof length === 'string') ctx.set('Content-Length', length);
    ctx.body = body;
  };
}

const byId = { kind: 'local', path: ROUTE, capability: 'video-generation', errorEnvelope: 'canonical', routePattern: `${ROUTE}/:id` } as const;

export const videoEndpoints: readonly LocalEndpoint[] = [
  {
    ...byId, method: 'GET',
    summary: 'One video job, as polling last saw it: status queued, in_progress, completed or failed, progress, and once completed its url and seconds.',
    responses: { '200': { description: 'The video job.', schema: videoJobSchema } },
    handler: fetchHandler,
  },
  {
    ...byId, routePattern: `${ROUTE}/:id/content`, method: 'GET',
    summary: 'A completed job\'s video: streamed by the gateway when the provider\'s result needs its credential (as the job\'s url says), else a redirect to the provider\'s URL. 404 before the job completed.',
    responses: {
      '200': { description: 'The video (video/mp4 unless the provider says otherwise), streamed.', schema: { type: 'string', format: 'binary' }, contentType: 'video/*' },
      '302': { description: 'The provider\'s public URL of the video.' },
    },
    handler: contentHandler,
  },
];
