/**
 * The media kit's image fixtures on gemini and vertex-ai (Imagen's :predict) and bedrock (Nova Canvas through
 * InvokeModel), each fake answering in its provider's documented format and error shape.
 */
import assert from 'node:assert/strict';
import bedrock from '../../providers/bedrock/index.ts';
import gemini from '../../providers/gemini/index.ts';
import vertex from '../../providers/vertex-ai/index.ts';
import { runMediaConformance } from './media.ts';
import type { ImageWire, MediaAnswer } from './media-wire.ts';

const json = (body: unknown, status = 200, headers: Record<string, string> = {}): MediaAnswer =>
  ({ status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

const GOOGLE_STATUS: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL' };

/** Imagen's :predict, the same on both Google APIs; only the credential differs. */
const imagenWire = (assertAuth: ImageWire['assertAuth']): ImageWire => ({
  answer: (req, png) => json({ predictions: Array.from({ length: req.json.parameters.sampleCount as number }, () => ({ mimeType: 'image/png', bytesBase64Encoded: png.toString('base64') })) }),
  summarize(req) {
    const model = /\/models\/([^/:]+):predict$/.exec(req.path)?.[1];
    return model ? { model, prompt: req.json.instances[0].prompt, n: req.json.parameters.sampleCount } : null;
  },
  errorBody: (status, message) => json({ error: { code: status, message, status: GOOGLE_STATUS[status] ?? 'UNKNOWN' } }, status),
  assertAuth,
});

runMediaConformance({
  provider: gemini,
  credential: 'gemini-media-kit',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1beta\napiKey: gemini-media-kit`,
  image: { model: 'imagen-4.0-generate-001', wire: imagenWire((req, credential) => assert.equal(req.headers['x-goog-api-key'], credential)) },
});

runMediaConformance({
  provider: vertex,
  credential: 'ya29.vertex-media-kit',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1/projects/p1/locations/us-central1\napiKey: ya29.vertex-media-kit`,
  image: { model: 'imagen-3.0-generate-002', wire: imagenWire((req, credential) => assert.equal(req.headers.authorization, `Bearer ${credential}`)) },
});

const AMAZON_ERROR: Record<number, string> = { 400: 'ValidationException', 401: 'UnrecognizedClientException', 429: 'ThrottlingException', 500: 'InternalServerException' };

runMediaConformance({
  provider: bedrock,
  credential: 'ABSK-bedrock-media-kit',
  // A Bedrock API key: the runtime takes it as a bearer token.
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}\napiKey: ABSK-bedrock-media-kit\noptions: { region: us-east-1 }`,
  image: {
    model: 'amazon.nova-canvas-v1:0',
    wire: {
      answer: (req, png) => json({ images: Array.from({ length: req.json.imageGenerationConfig.numberOfImages as number }, () => png.toString('base64')) }),
      summarize(req) {
        const id = /^\/model\/([^/]+)\/invoke$/.exec(req.path)?.[1];
        return id ? { model: decodeURIComponent(id), prompt: req.json.textToImageParams.text, n: req.json.imageGenerationConfig.numberOfImages } : null;
      },
      errorBody: (status, message) => json({ message }, status, { 'x-amzn-errortype': `${AMAZON_ERROR[status] ?? 'InternalServerException'}:http://internal.amazon.com/coral/com.amazon.bedrock/` }),
      assertAuth: (req, credential) => assert.equal(req.headers.authorization, `Bearer ${credential}`),
    },
  },
});
