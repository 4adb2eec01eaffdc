/** The conformance kit on the Anthropic Messages translator: every fixture applies, streaming included. */
import anthropic from '../../providers/anthropic/index.ts';
import { runConformance } from './kit.ts';
import { anthropicWire } from './wires/anthropic.ts';

runConformance({
  provider: anthropic,
  wire: anthropicWire,
  credential: 'sk-ant-conformance',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1\napiKey: sk-ant-conformance`,
});
