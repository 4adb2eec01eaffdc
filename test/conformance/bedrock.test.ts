/**
 * The conformance kit on Bedrock (Converse), twice: SigV4 with temporary credentials from the environment,
 * and a Bedrock API key. The fake refuses, as AWS would, any request whose credential does not check out.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import bedrock from '../../providers/bedrock/index.ts';
import { runConformance } from './kit.ts';
import { bedrockWire } from './wires/bedrock.ts';

const AWS = { accessKeyId: 'AKIAIOSFODNN7CONFORM', secretAccessKey: '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', sessionToken: 'IQoJb3JpZ2luX2VjE+session/token==', region: 'us-east-1' };
const sigv4 = bedrockWire({ kind: 'sigv4', ...AWS });
const apiKey = bedrockWire({ kind: 'apiKey', apiKey: 'ABSKQmVkcm9ja0FQSUtleS1jb25mb3JtYW5jZQ==' });

describe('bedrock with SigV4', () => {
  runConformance({
    provider: bedrock,
    wire: sigv4,
    credential: AWS.accessKeyId,
    providerBlock: (baseUrl) => [
      `baseUrl: ${baseUrl}`,
      'options:',
      `  region: ${AWS.region}`,
      '  accessKeyId: ${AWS_ACCESS_KEY_ID}',
      '  secretAccessKey: ${AWS_SECRET_ACCESS_KEY}',
      '  sessionToken: ${AWS_SESSION_TOKEN}',
    ].join('\n'),
    env: { AWS_ACCESS_KEY_ID: AWS.accessKeyId, AWS_SECRET_ACCESS_KEY: AWS.secretAccessKey, AWS_SESSION_TOKEN: AWS.sessionToken },
    extraRoutes: (req, res) => sigv4.refuse(req, res),
  });
  test('the fake found every request correctly signed', () => assert.deepEqual(sigv4.refused, []));
});

describe('bedrock with a Bedrock API key', () => {
  runConformance({
    provider: bedrock,
    wire: apiKey,
    credential: 'ABSKQmVkcm9ja0FQSUtleS1jb25mb3JtYW5jZQ==',
    providerBlock: (baseUrl) => `baseUrl: ${baseUrl}\napiKey: \${AWS_BEARER_TOKEN_BEDROCK}\noptions:\n  region: us-west-2`,
    env: { AWS_BEARER_TOKEN_BEDROCK: 'ABSKQmVkcm9ja0FQSUtleS1jb25mb3JtYW5jZQ==' },
    extraRoutes: (req, res) => apiKey.refuse(req, res),
  });
  test('the fake found the API key on every request', () => assert.deepEqual(apiKey.refused, []));
});
