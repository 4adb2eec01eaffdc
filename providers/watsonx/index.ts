/** IBM watsonx.ai chat, embeddings and rerank, authorized with an IBM Cloud IAM token exchanged for the configured API key. */
import { defineProvider } from '../../core/dispatch/provider.ts';
import { DEFAULT_VERSION, watsonxChat } from './chat.ts';
import { watsonxEmbeddings, watsonxRerank } from './embed-rerank.ts';
import { watsonxError } from './errors.ts';
import { DEFAULT_IAM_URL, iamToken } from './iam.ts';

export default defineProvider({
  slug: 'watsonx',
  family: 'watsonx',
  displayName: 'IBM watsonx.ai',
  defaultBaseUrl: 'https://{region}.ml.cloud.ibm.com/ml/v1',
  configSchema: {
    type: 'object', additionalProperties: false,
    description: 'IBM watsonx.ai options. apiKey is an IBM Cloud API key, exchanged at IAM for a bearer token. One of projectId or spaceId is required.',
    properties: {
      region: { type: 'string', default: 'us-south', description: 'Fills {region} in the default base URL https://{region}.ml.cloud.ibm.com/ml/v1 (us-south, eu-de, eu-gb, jp-tok, au-syd, ca-tor, ...).' },
      projectId: { type: 'string', minLength: 1, description: 'The watsonx.ai project every request runs in (sent as project_id).' },
      spaceId: { type: 'string', minLength: 1, description: 'A deployment space instead of a project (sent as space_id).' },
      version: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', default: DEFAULT_VERSION, description: 'The API version date sent as ?version=.' },
      iamUrl: { type: 'string', pattern: '^https?://', default: DEFAULT_IAM_URL, description: 'The IBM Cloud IAM token endpoint the API key is exchanged at.' },
      timeLimitMs: { type: 'integer', minimum: 1, description: 'time_limit for every chat request: watsonx stops generating after this many milliseconds.' },
    },
    anyOf: [{ required: ['projectId'] }, { required: ['spaceId'] }],
  },
  capabilities: {
    chat: { stream: true, tools: true, vision: true, n: true },
    embeddings: {},
    rerank: {},
  },
  chat: watsonxChat,
  embeddings: watsonxEmbeddings,
  rerank: watsonxRerank,
  async authorize(request, target, io) {
    const token = await iamToken(target, io);
    return { ...request, headers: { ...request.headers, authorization: `Bearer ${token}` } };
  },
  mapError: (status, body, target) => watsonxError(target, status, body),
});
