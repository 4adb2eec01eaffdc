/** The video fixtures on Replicate (Veo as a prediction): the output URL is public, so the caller fetches it. */
import replicate from '../../providers/replicate/index.ts';
import { runVideoConformance } from './video.ts';
import { replicateVideoWire } from './wires/video-replicate.ts';

runVideoConformance({
  provider: replicate,
  credential: 'r8-video-kit',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1\napiKey: r8-video-kit`,
  wire: replicateVideoWire(),
  model: 'google/veo-3',
  seconds: 8,
  download: false,
});
