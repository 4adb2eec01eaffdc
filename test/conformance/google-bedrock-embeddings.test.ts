/**
 * The embeddings fixtures on the Gemini API (batchEmbedContents), Vertex AI (predict) and Bedrock (InvokeModel:
 * Cohere Embed for the fixtures' batches, Titan Text Embeddings V2 for dimensions, signed with SigV4 and checked
 * by a fake that recomputes the signature). Gemini and Cohere on Bedrock count no tokens: the gateway estimates.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import bedrock from '../../providers/bedrock/index.ts';
import gemini from '../../providers/gemini/index.ts';
import vertexAi from '../../providers/vertex-ai/index.ts';
import { runModalityConformance } from './modalities.ts';
import { bedrockWire } from './wires/bedrock.ts';
import { bedrockEmbeddingsWire } from './wires/bedrock-embeddings.ts';
import { geminiEmbeddingsWire, vertexEmbeddingsWire } from './wires/google-embeddings.ts';

runModalityConformance({
  provider: gemini,
  credential: 'AIza-conformance',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1beta\napiKey: AIza-conformance`,
  embeddings: { wire: geminiEmbeddingsWire, model: 'embedding-001', dimensionsModel: 'text-embedding-004', reportsUsage: false },
});

runModalityConformance({
  provider: vertexAi,
  credential: 'ya29.conformance-static-token',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1/projects/conformance-project/locations/us-central1\napiKey: ya29.conformance-static-token`,
  embeddings: { wire: vertexEmbeddingsWire, model: 'textembedding-gecko@003', dimensionsModel: 'text-embedding-005' },
});

const AWS = { accessKeyId: 'AKIAIOSFODNN7EMBEDKIT', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEMBEDKITKEY', region: 'eu-west-1' };
const sigv4 = bedrockWire({ kind: 'sigv4', ...AWS });

runModalityConformance({
  provider: bedrock,
  credential: AWS.accessKeyId,
  providerBlock: (baseUrl) => [
    `baseUrl: ${baseUrl}`,
    'options:',
    `  region: ${AWS.region}`,
    '  accessKeyId: ${AWS_ACCESS_KEY_ID}',
    '  secretAccessKey: ${AWS_SECRET_ACCESS_KEY}',
  ].join('\n'),
  env: { AWS_ACCESS_KEY_ID: AWS.accessKeyId, AWS_SECRET_ACCESS_KEY: AWS.secretAccessKey },
  extraRoutes: (req, res) => sigv4.refuse(req, res),
  embeddings: { wire: bedrockEmbeddingsWire(), model: 'cohere.embed-english-v3', dimensionsModel: 'amazon.titan-embed-text-v2:0', dimensions: 256, reportsUsage: false },
});

test('bedrock: the fake found every embeddings request correctly signed', () => assert.deepEqual(sigv4.refused, []));
