/**
 * Video generation in the canonical format. POST /v1/video/generations starts a job (`video-<uuid>`) on a
 * provider's task API; the job runner polls it until it ends; GET /v1/video/generations/:id reads the job.
 * A job is metered once, when it completes, by the seconds of video made (pricing.videoSecond).
 */

export interface VideoRequest {
  model: string;
  prompt: string;
  /** Length asked, in seconds; the provider's default when left out. */
  seconds?: number;
  /** WIDTHxHEIGHT, e.g. 1280x720. */
  size?: string;
  /** e.g. 16:9, 9:16; for providers that take a ratio rather than a size. */
  aspect_ratio?: string;
  /** A first frame (image to video): an https URL or a data: URI. */
  image?: string;
  negative_prompt?: string;
  seed?: number;
}

export interface CanonicalVideoRequest {
  modality: 'video';
  model: string;
  stream: false;
  body: VideoRequest;
}

export const VIDEO_STATUSES = ['queued', 'in_progress', 'completed', 'failed'] as const;
export type VideoStatus = (typeof VIDEO_STATUSES)[number];

/** A provider task as a translator reads it from the provider's answer. */
export interface VideoTaskState {
  status: VideoStatus;
  /** 0 to 100, when the provider reports it. */
  progress?: number;
  /**
   * Completed: where the video is. A URL anyone may fetch goes to the caller as it is; one that needs the
   * provider's credential is fetched by the gateway through `VideoTranslator.download` (set `needsCredential`).
   */
  result?: { url: string; needsCredential?: boolean; contentType?: string };
  /** Completed: seconds of video made, when the provider says; else the asked seconds are billed. */
  seconds?: number;
  /** Failed: the provider's reason. */
  error?: string;
}

/** A video job as the caller sees it (POST answers it, GET /v1/video/generations/:id reads it). */
export interface VideoJob {
  /** `video-<uuid>`. */
  id: string;
  object: 'video.generation';
  /** The model the caller asked for. */
  model: string;
  status: VideoStatus;
  /** 0 to 100. */
  progress: number;
  prompt: string;
  /** Seconds since the epoch. */
  created_at: number;
  completed_at: number | null;
  /** Completed: where to fetch the video (the gateway's content route when the provider's URL needs its credential). */
  url: string | null;
  /** Completed: the seconds of video made, as billed. */
  seconds: number | null;
  error: { code: string; message: string } | null;
}
