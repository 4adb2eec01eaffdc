/**
 * Every Bedrock request's credential. The runtime and the control plane take a Bedrock API key as a bearer token
 * or SigV4 with service `bedrock`; S3 takes SigV4 only (service `s3`, its own path rules), so S3 requests are
 * signed with the AWS credentials even when an API key is set.
 */
import type { ProviderTarget, UpstreamRequest } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { optionsOf, regionOf, signingService } from './endpoints.ts';
import { signRequest, type AwsCredentials } from './sigv4.ts';

/** The URL the upstream client will send to (base path + request path), which is what gets signed. */
export function sentUrl(baseUrl: string, path: string): string {
  if (/^https?:\/\//i.test(path)) return path;
  const base = new URL(baseUrl);
  return `${base.origin}${base.pathname.replace(/\/+$/, '')}${base.search}${path}`;
}

/** The AWS credentials of the provider block, or null when it has none. */
export function awsCredentials(target: ProviderTarget): AwsCredentials | null {
  const { accessKeyId, secretAccessKey, sessionToken } = optionsOf(target);
  if (!accessKeyId || !secretAccessKey) return null;
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
}

export function authorize(request: UpstreamRequest, target: ProviderTarget, now: number): UpstreamRequest {
  const url = sentUrl(target.baseUrl, request.path);
  const service = signingService(target, url);
  if (target.apiKey && service === 'bedrock') return { ...request, headers: { ...request.headers, authorization: `Bearer ${target.apiKey}` } };
  const credentials = awsCredentials(target);
  if (!credentials) {
    const what = service === 's3'
      ? 'for S3: set options.accessKeyId and options.secretAccessKey (S3 does not take a Bedrock API key)'
      : ': set apiKey (a Bedrock API key) or options.accessKeyId and options.secretAccessKey';
    throw new GatewayError('UPSTREAM_ERROR', `${target.slug} has no credential${what}`, { provider: target.slug });
  }
  // A host on AWS names its region; a proxy or a VPC endpoint may not, and then options.region must.
  const region = regionOf(target, url);
  if (!region) throw new GatewayError('UPSTREAM_ERROR', `${target.slug} cannot sign for an unknown region: set options.region`, { provider: target.slug });
  const headers = signRequest({
    method: request.method,
    url,
    headers: request.headers,
    ...(request.body === undefined ? {} : { body: request.body }),
    // A streamed body (the passthrough, an S3 upload part) passes unread: hashing it would mean holding it.
    ...(request.bodyStreamed ? { unsignedPayload: true } : {}),
    region,
    service,
    credentials,
    now,
  });
  return { ...request, headers };
}
