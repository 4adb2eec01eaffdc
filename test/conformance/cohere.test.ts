/** The conformance kit on Cohere's v2 chat translator. */
import cohere from '../../providers/cohere/index.ts';
import { runConformance } from './kit.ts';
import { cohereWire } from './wires/cohere.ts';

runConformance({
  provider: cohere,
  wire: cohereWire,
  credential: 'co-conformance-key',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}\napiKey: co-conformance-key`,
  // Cohere's response_format is {type: json_object, json_schema}: the schema arrives without its name
  // (test/providers/cohere.test.ts checks the schema itself).
  ignore: ['jsonSchema'],
});
