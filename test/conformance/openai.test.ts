/** The conformance kit on the reference translator, OpenAI: chat, and embeddings. */
import openai from '../../providers/openai/index.ts';
import { runConformance } from './kit.ts';
import { openAiEmbeddingsWire } from './wires/openai-embeddings.ts';
import { openAiWire } from './wires/openai.ts';

runConformance({
  provider: openai,
  wire: openAiWire,
  credential: 'sk-conformance-openai',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1\napiKey: sk-conformance-openai`,
  embeddings: { wire: openAiEmbeddingsWire(), model: 'text-embedding-ada-002', dimensionsModel: 'text-embedding-3-small' },
});
