/** The conformance kit on the Gemini API translator. */
import gemini from '../../providers/gemini/index.ts';
import { runConformance } from './kit.ts';
import { geminiApiWire } from './wires/gemini.ts';

runConformance({
  provider: gemini,
  wire: geminiApiWire,
  credential: 'AIza-conformance-gemini',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1beta\napiKey: AIza-conformance-gemini`,
  // Gemini function calls carry no ids: the gateway makes them, and results are matched by function name.
  ignore: ['toolCallIds'],
});
