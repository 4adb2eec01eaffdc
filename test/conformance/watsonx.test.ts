/** The conformance kit on IBM watsonx.ai, its IAM token endpoint faked beside the chat API. */
import watsonx from '../../providers/watsonx/index.ts';
import { runConformance } from './kit.ts';
import { iamRoute, watsonxWire } from './wires/watsonx.ts';

const TOKEN = 'iam-conformance-token';

runConformance({
  provider: watsonx,
  wire: watsonxWire,
  // The chat API must see the exchanged token, never the API key.
  credential: TOKEN,
  providerBlock: (baseUrl) => [
    `baseUrl: ${baseUrl}/ml/v1`,
    'apiKey: ibm-cloud-conformance-key',
    'options:',
    '  projectId: 0c6d1a2b-conformance',
    `  iamUrl: ${baseUrl}/identity/token`,
  ].join('\n'),
  extraRoutes: iamRoute({ apiKey: 'ibm-cloud-conformance-key', token: () => TOKEN }),
});
