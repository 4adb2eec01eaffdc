/** The video fixtures on OpenAI's video API (Sora): the MP4 needs the key, so the gateway downloads it. */
import openai from '../../providers/openai/index.ts';
import { runVideoConformance } from './video.ts';
import { openAiVideoWire } from './wires/video-openai.ts';

runVideoConformance({
  provider: openai,
  credential: 'sk-video-kit',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1\napiKey: sk-video-kit`,
  wire: openAiVideoWire(),
  model: 'sora-2',
  seconds: 8,
  download: true,
});
