/**
 * The video fixtures on Veo (the Gemini API and Vertex AI) and Nova Reel (Bedrock). Each result needs the
 * provider's credential (the API key, the OAuth token, a SigV4 signature for S3), so the gateway serves it from
 * its content route. None of these task APIs reports progress: a running task shows only its status.
 */
import { generateKeyPairSync } from 'node:crypto';
import bedrock from '../../providers/bedrock/index.ts';
import gemini from '../../providers/gemini/index.ts';
import vertex from '../../providers/vertex-ai/index.ts';
import { VERTEX_BASE_PATH } from '../fakes/vertex.ts';
import { ACCESS_KEY, REGION, SECRET } from '../providers/bedrock-files-fake.ts';
import { runVideoConformance } from './video.ts';
import { bedrockVideoWire } from './wires/video-bedrock.ts';
import { geminiVideoWire, vertexVideoWire } from './wires/video-google.ts';

runVideoConformance({
  provider: gemini,
  credential: 'gemini-video-kit',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1beta\napiKey: gemini-video-kit`,
  wire: geminiVideoWire(),
  model: 'veo-3.0-generate-001',
  // Veo 3 makes 8-second videos.
  seconds: 8,
  download: true,
  // A Veo operation is running or done; it carries no percentage.
  progress: false,
});

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ISSUED_TOKEN = 'ya29.video-kit-vertex-token';
const STORAGE_URI = 'gs://kit-veo/runs/';

runVideoConformance({
  provider: vertex,
  credential: ISSUED_TOKEN,
  // A service-account key (as JSON text, as an environment variable holds it) whose token_uri is the fake's.
  providerBlock: (baseUrl) => [
    `baseUrl: ${baseUrl}${VERTEX_BASE_PATH}`,
    'options:',
    `  serviceAccountKey: ${JSON.stringify(JSON.stringify({
      type: 'service_account', client_email: 'gateway@p1.iam.gserviceaccount.com',
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }), token_uri: `${baseUrl}/token`,
    }))}`,
    `  videoStorageUri: "${STORAGE_URI}"`,
    `  storageUrl: ${baseUrl}`,
  ].join('\n'),
  wire: vertexVideoWire({ basePath: VERTEX_BASE_PATH, storageUri: STORAGE_URI, publicKey, token: ISSUED_TOKEN }),
  model: 'veo-2.0-generate-001',
  // Veo 2 makes 5 to 8 seconds.
  seconds: 5,
  download: true,
  // fetchPredictOperation answers the operation: running or done, no percentage.
  progress: false,
});

const OUTPUT = 's3://kit-reels/out/';

runVideoConformance({
  provider: bedrock,
  credential: ACCESS_KEY,
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}\noptions: { region: ${REGION}, accessKeyId: ${ACCESS_KEY}, secretAccessKey: "${SECRET}", s3Endpoint: ${baseUrl}/s3, videoOutputS3Uri: "${OUTPUT}" }`,
  wire: bedrockVideoWire(OUTPUT),
  model: 'amazon.nova-reel-v1:1',
  // Nova Reel makes 6-second shots (longer videos are multiples of 6).
  seconds: 6,
  download: true,
  // GetAsyncInvoke's status is InProgress, Completed or Failed, with no percentage.
  progress: false,
});
