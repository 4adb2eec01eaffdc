/**
 * Amazon Bedrock, chat through the Converse API (one request shape for every model on Bedrock); images and video
 * with Amazon's models (images.ts, video.ts); files as S3 objects; batch inference jobs polled on the control
 * plane. Requests are SigV4-signed with the configured AWS credentials, or carry a Bedrock API key as a bearer
 * token (not to S3, which takes SigV4 only).
 */
import { defineProvider, type ChatTranslator } from '../../core/dispatch/provider.ts';
import { authorize } from './auth.ts';
import { bedrockBatches } from './batches.ts';
import { bedrockEmbeddingOptions, bedrockEmbeddings } from './embeddings.ts';
import { DEFAULT_S3_PREFIX } from './endpoints.ts';
import { bedrockHttpError } from './errors.ts';
import { bedrockFiles } from './files.ts';
import { AMAZON_MAX_IMAGES, bedrockImages } from './images.ts';
import { bedrockRerank } from './rerank.ts';
import { toConverse } from './request.ts';
import { fromConverse } from './response.ts';
import { BUCKET_PATTERN } from './s3.ts';
import { uriEncode } from './sigv4.ts';
import { converseStreamDecoder } from './stream.ts';
import { bedrockVideo, bedrockVideoOptions } from './video.ts';

const chat: ChatTranslator = {
  toUpstream(request, target, stream) {
    // Model ids hold ':' and inference-profile ARNs '/': one path segment, percent-encoded.
    const path = `/model/${uriEncode(target.upstreamModel)}/${stream ? 'converse-stream' : 'converse'}`;
    const headers = {
      'content-type': 'application/json',
      accept: stream ? 'application/vnd.amazon.eventstream' : 'application/json',
      ...target.headers,
    };
    return { method: 'POST', path, headers, body: JSON.stringify(toConverse(request, target)) };
  },
  fromUpstream: fromConverse,
  streamFormat: 'aws-eventstream',
  streamDecoder: converseStreamDecoder,
};

const credential = (what: string) => ({ type: 'string', description: `${what} Ignored for Bedrock requests when the provider block sets apiKey; S3 requests (files, batch results) always sign with them.` });

export default defineProvider({
  slug: 'bedrock',
  family: 'bedrock',
  displayName: 'Amazon Bedrock',
  defaultBaseUrl: 'https://bedrock-runtime.{region}.amazonaws.com',
  configSchema: {
    type: 'object', additionalProperties: false,
    description: 'Amazon Bedrock options. Authentication: apiKey (a Bedrock API key, sent as a bearer token), or else AWS credentials that sign every request with SigV4; S3 (files, batch results) takes AWS credentials only.',
    properties: {
      region: { type: 'string', pattern: '^[a-z]{2}(-[a-z]+)+-\\d+$', description: 'AWS region, e.g. us-east-1: fills the default base URL https://bedrock-runtime.{region}.amazonaws.com and scopes the SigV4 signature (required unless baseUrl is an AWS bedrock-runtime host, which names it).' },
      accessKeyId: credential('AWS access key id for SigV4, e.g. ${AWS_ACCESS_KEY_ID}.'),
      secretAccessKey: credential('AWS secret access key for SigV4, e.g. ${AWS_SECRET_ACCESS_KEY}.'),
      sessionToken: credential('Session token of temporary AWS credentials, e.g. ${AWS_SESSION_TOKEN:-}; sent as X-Amz-Security-Token and signed. Empty means none.'),
      additionalModelRequestFields: {
        type: 'object',
        description: "Model-specific fields merged into every request's additionalModelRequestFields (e.g. {top_k: 50} for Claude); reasoning fields derived from the request take precedence.",
      },
      ...bedrockEmbeddingOptions,
      s3Bucket: { type: 'string', pattern: BUCKET_PATTERN, description: 'The S3 bucket /v1/files uploads go to (as multipart uploads; needs AWS credentials). Without it an upload to bedrock is 400 CAPABILITY_NOT_SUPPORTED.' },
      s3Prefix: { type: 'string', maxLength: 512, default: DEFAULT_S3_PREFIX, description: 'Key prefix of uploaded files: each is {s3Prefix}{uuid}/{filename}.' },
      s3Endpoint: { type: 'string', pattern: '^https?://', description: 'S3 endpoint, addressed path-style ({s3Endpoint}/{bucket}/{key}); default https://s3.{region}.amazonaws.com.' },
      ...bedrockVideoOptions,
      controlPlaneUrl: { type: 'string', pattern: '^https?://', description: 'Bedrock control plane, where batch inference jobs are polled and stopped; default https://bedrock.{region}.amazonaws.com.' },
    },
    dependencies: { accessKeyId: ['secretAccessKey'], secretAccessKey: ['accessKeyId'] },
  },
  capabilities: {
    chat: { stream: true, tools: true, vision: true, n: false },
    // InvokeModel with Titan Text Embeddings (one input a call) and Cohere Embed (up to 96).
    embeddings: {},
    // InvokeModel with Cohere Rerank and Amazon Rerank (up to 1,000 documents).
    rerank: {},
    // InvokeModel with Amazon Nova Canvas and Titan Image Generator (up to 5 images a call) and Stability's models (one).
    image: { maxImages: AMAZON_MAX_IMAGES },
    // Nova Reel through StartAsyncInvoke; videos land in S3 (options.videoOutputS3Uri) and are read back signed.
    video: {},
    // S3 objects in options.s3Bucket.
    files: {},
    // Model invocation jobs made on Bedrock, registered by their ARN.
    batch: { submit: false },
  },
  chat,
  embeddings: bedrockEmbeddings,
  rerank: bedrockRerank,
  image: bedrockImages,
  video: bedrockVideo,
  files: bedrockFiles,
  batches: bedrockBatches,
  authorize: async (request, target, io) => authorize(request, target, io.now()),
  mapError: (status, body, target, headers) => bedrockHttpError(target, status, body, headers),
});
