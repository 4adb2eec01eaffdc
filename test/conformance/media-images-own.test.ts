/** The media fixtures (images) on the providers with their own image formats: Stability AI and Runway. */
import runway from '../../providers/runway/index.ts';
import stabilityAi from '../../providers/stability-ai/index.ts';
import { runMediaConformance } from './media.ts';
import { runwayImageWire, stabilityImageWire } from './wires/media-images-own.ts';

runMediaConformance({
  provider: stabilityAi, credential: 'sk-stability-kit',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v2beta\napiKey: sk-stability-kit`,
  image: { wire: stabilityImageWire, model: 'sd3.5-large' },
});

runMediaConformance({
  provider: runway, credential: 'key_runway_kit',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1\napiKey: key_runway_kit\noptions: { pollIntervalMs: 1 }`,
  image: { wire: runwayImageWire(), model: 'gen4_image' },
});
