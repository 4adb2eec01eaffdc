/** The video fixtures on fal's queue (Kling): the status polled, the output read once COMPLETED, a public video URL. */
import fal from '../../providers/fal-ai/index.ts';
import { runVideoConformance } from './video.ts';
import { falVideoWire } from './wires/video-fal.ts';

runVideoConformance({
  provider: fal,
  credential: 'fal-video-kit',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}\napiKey: fal-video-kit`,
  wire: falVideoWire(),
  model: 'fal-ai/kling-video/v2.1/master/text-to-video',
  seconds: 5,
  download: false,
});
