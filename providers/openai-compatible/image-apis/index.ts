/** The OpenAI-compatible hosts whose image APIs have shapes of their own (each file says its host's). */
export { fireworksImages } from './fireworks.ts';
export { hyperbolicImages } from './hyperbolic.ts';
export { nebiusImages } from './nebius.ts';
export { siliconflowImages } from './siliconflow.ts';
export { volcengineImages } from './volcengine.ts';
export { zhipuImages } from './zhipu.ts';
export type { CompatibleImage, ImageHeaders } from './shared.ts';
