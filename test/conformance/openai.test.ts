/** The conformance kit on the reference translator, OpenAI. */
import openai from '../../providers/openai/index.ts';
import { runConformance } from './kit.ts';
import { openAiWire } from './wires/openai.ts';

runConformance({
  provider: openai,
  wire: openAiWire,
  credential: 'sk-conformance-openai',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1\napiKey: sk-conformance-openai`,
});
