/**
 * The conformance kit on Vertex AI, twice: a Gemini model (generateContent, with a service-account key whose
 * token is exchanged at the fake's token endpoint) and a Claude model (rawPredict, with a static access token).
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, verify } from 'node:crypto';
import vertexAi from '../../providers/vertex-ai/index.ts';
import { runConformance } from './kit.ts';
import { VERTEX_PATH, vertexClaudeWire, vertexGeminiWire } from './wires/vertex.ts';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ISSUED_TOKEN = 'ya29.conformance-vertex-token';

runConformance({
  provider: vertexAi,
  wire: vertexGeminiWire,
  credential: ISSUED_TOKEN,
  // The key file as JSON text (as an environment variable would hold it), its token_uri on the fake.
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}${VERTEX_PATH}\noptions:\n  serviceAccountKey: ${JSON.stringify(JSON.stringify({
    type: 'service_account',
    client_email: 'gateway@conformance-project.iam.gserviceaccount.com',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    token_uri: `${baseUrl}/token`,
  }))}`,
  upstreamModel: 'gemini-2.5-flash',
  ignore: ['toolCallIds'],
  extraRoutes(req, res) {
    if (req.url !== '/token') return false;
    const form = new URLSearchParams(req.rawBody);
    assert.equal(form.get('grant_type'), 'urn:ietf:params:oauth:grant-type:jwt-bearer');
    const [header, claims, signature] = (form.get('assertion') ?? '').split('.');
    assert.ok(verify('sha256', Buffer.from(`${header}.${claims}`), publicKey, Buffer.from(signature!, 'base64url')), 'the assertion is signed with the key');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ access_token: ISSUED_TOKEN, expires_in: 3599, token_type: 'Bearer' }));
    return true;
  },
});

runConformance({
  provider: vertexAi,
  wire: vertexClaudeWire,
  credential: 'ya29.static-operator-token',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}${VERTEX_PATH}\napiKey: ya29.static-operator-token`,
  upstreamModel: 'claude-sonnet-4-5@20250929',
});
