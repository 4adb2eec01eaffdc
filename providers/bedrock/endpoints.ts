/**
 * Where Bedrock's requests go besides the runtime (the provider's baseUrl): the control plane (model invocation
 * jobs) and S3 (files, batch results), and which region and service name each is signed for.
 */
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';

export interface BedrockOptions {
  region?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  s3Bucket?: string;
  s3Prefix?: string;
  s3Endpoint?: string;
  controlPlaneUrl?: string;
  videoOutputS3Uri?: string;
}

export const DEFAULT_S3_PREFIX = 'aigw/';

export const optionsOf = (target: ProviderTarget) => target.options as BedrockOptions;

/** bedrock-runtime.eu-west-1.amazonaws.com, bedrock.eu-west-1..., s3.eu-west-1... (and their -fips twins) name their region. */
const AWS_HOST = /^(?:bedrock-runtime|bedrock|s3)(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com$/;

function hostRegion(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  return AWS_HOST.exec(new URL(url).hostname)?.[1];
}

/** options.region, else the region the request's host names, else the one the runtime's base URL names. */
export function regionOf(target: ProviderTarget, url?: string): string | undefined {
  return optionsOf(target).region || (url === undefined ? undefined : hostRegion(url)) || hostRegion(target.baseUrl);
}

const withoutTrailingSlash = (url: string) => url.replace(/\/+$/, '');

/** The configured URL, else the region's AWS endpoint; with neither, a configuration error naming both options. */
function regional(target: ProviderTarget, option: 's3Endpoint' | 'controlPlaneUrl', host: string): string {
  const configured = optionsOf(target)[option];
  if (configured) return withoutTrailingSlash(configured);
  const region = regionOf(target);
  if (!region) throw new GatewayError('UPSTREAM_ERROR', `${target.slug} cannot name its ${host} endpoint: set options.region or options.${option}`, { provider: target.slug });
  return `https://${host}.${region}.amazonaws.com`;
}

/** S3, addressed path-style: `{endpoint}/{bucket}/{key}`. */
export const s3Endpoint = (target: ProviderTarget) => regional(target, 's3Endpoint', 's3');

/** The Bedrock control plane (model invocation jobs). */
export const controlPlaneUrl = (target: ProviderTarget) => regional(target, 'controlPlaneUrl', 'bedrock');

/** Whether `url` is under `base`: the same origin and path, then nothing, a `/` or a `?`. */
function isUnder(url: string, base: string): boolean {
  return url === base || (url.startsWith(base) && (url[base.length] === '/' || url[base.length] === '?'));
}

/**
 * S3 for a URL under the S3 endpoint; `bedrock` (the signing name of the runtime and the control plane alike)
 * for everything else. A target that cannot name an S3 endpoint sends nothing to S3.
 */
export function signingService(target: ProviderTarget, url: string): 's3' | 'bedrock' {
  let s3: string;
  try {
    s3 = s3Endpoint(target);
  } catch {
    return 'bedrock';
  }
  return isUnder(url, s3) ? 's3' : 'bedrock';
}
