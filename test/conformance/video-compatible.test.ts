/**
 * The video fixtures on the OpenAI-compatible hosts' task APIs: Together's /v2/videos, xAI's deferred requests,
 * Zhipu's async results (no progress, no reason for a failure) and Ark's Seedance tasks (no progress). Their
 * videos are public URLs, handed to the caller as they are.
 */
import { compatibleProviderBySlug } from '../../providers/openai-compatible/index.ts';
import { runVideoConformance, type VideoTarget } from './video.ts';
import { togetherVideoWire, volcengineVideoWire, xaiVideoWire, zhipuVideoWire } from './wires/video-compatible.ts';

const target = (slug: string, basePath: string, rest: Pick<VideoTarget, 'wire' | 'model' | 'seconds'> & Partial<VideoTarget>): VideoTarget => ({
  provider: compatibleProviderBySlug(slug), credential: `${slug}-video-kit`, download: false,
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}${basePath}\napiKey: ${slug}-video-kit`,
  ...rest,
});

runVideoConformance(target('together-ai', '/v1', { wire: togetherVideoWire(), model: 'minimax/hailuo-02', seconds: 6, progress: false }));
runVideoConformance(target('xai', '/v1', { wire: xaiVideoWire(), model: 'grok-imagine-video', seconds: 8 }));
runVideoConformance(target('zhipu', '/api/paas/v4', { wire: zhipuVideoWire(), model: 'cogvideox-3', seconds: 5, progress: false, failureReason: false }));
runVideoConformance(target('volcengine', '/api/v3', { wire: volcengineVideoWire(), model: 'doubao-seedance-1-0-pro-250528', seconds: 5, progress: false }));
