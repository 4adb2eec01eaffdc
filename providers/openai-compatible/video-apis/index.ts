/** The OpenAI-compatible hosts' video task APIs (each file says its host's wire format). */
export { togetherVideo } from './together.ts';
export { volcengineVideo } from './volcengine.ts';
export { xaiVideo } from './xai.ts';
export { zhipuVideo } from './zhipu.ts';
export type { CompatibleVideo, VideoHeaders } from './shared.ts';
