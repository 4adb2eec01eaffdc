/** The video fixtures on Runway's task API: text to video (gen4.5), its MP4 at a public URL. */
import runway from '../../providers/runway/index.ts';
import { runVideoConformance } from './video.ts';
import { runwayVideoWire } from './wires/video-runway.ts';

runVideoConformance({
  provider: runway,
  credential: 'key_runway_video_kit',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1\napiKey: key_runway_video_kit`,
  wire: runwayVideoWire(),
  model: 'gen4.5',
  seconds: 5,
  download: false,
});
