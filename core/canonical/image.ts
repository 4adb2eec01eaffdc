/**
 * Image generation in the canonical format (POST /v1/images/generations). Translators return what the provider
 * gave (a URL or base64 bytes per image); the core turns it into the caller's `response_format`: a URL answer is
 * downloaded for `b64_json`, and base64 bytes become a `data:` URL for `url` (the gateway hosts no images).
 */

export const IMAGE_RESPONSE_FORMATS = ['url', 'b64_json'] as const;
export type ImageResponseFormat = (typeof IMAGE_RESPONSE_FORMATS)[number];

export interface ImageRequest {
  model: string;
  /** 1 to 4000 characters. */
  prompt: string;
  /** 1 to 10. A provider that makes fewer per call (ImageCapability.maxImages) gets several calls. */
  n: number;
  /** WIDTHxHEIGHT, e.g. 1024x1024. */
  size?: string;
  /** Model-dependent: standard, hd, low, medium, high, ... */
  quality?: string;
  /** Model-dependent: vivid, natural, a provider's style preset, ... */
  style?: string;
  response_format: ImageResponseFormat;
  user?: string;
}

export interface CanonicalImageRequest {
  modality: 'image';
  model: string;
  stream: false;
  body: ImageRequest;
}

/** One image as a provider answered it: a URL, or the bytes as base64 (then `mimeType` when it names one). */
export interface ProviderImage {
  url?: string;
  b64_json?: string;
  mimeType?: string;
  revised_prompt?: string;
}

/** What a translator makes of a provider's final answer. */
export interface ImageAnswer {
  images: ProviderImage[];
  /** Tokens, for providers that bill image models by tokens and report them (gpt-image-1). */
  usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number };
}

/** One image as the caller gets it: exactly one of url and b64_json, as response_format says. */
export interface GeneratedImage {
  url?: string;
  b64_json?: string;
  revised_prompt?: string;
}

/** What an image request is billed by: the count, at the size and quality asked (pricing.image). */
export interface ImageUsage {
  images: number;
  size?: string;
  quality?: string;
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
}

export interface ImageResult {
  object: 'image';
  /** Seconds since the epoch. */
  created: number;
  data: GeneratedImage[];
  usage: ImageUsage;
}

/** A progress report of a running image request (the `/image-progress` WebSocket namespace). */
export interface ImageProgress {
  request_id: string;
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  /** 0 to 100. */
  progress: number;
}
