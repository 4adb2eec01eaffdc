/**
 * Work metered outside a request: a batch's requests, summed once it ends; an embedding the gateway made on its
 * own behalf (core/pipeline/embed.ts). The core reports it to every
 * registered plugin (PluginDefinition.onMeteredWork, in registration order) through gateway.meterWork; each
 * plugin records it once per `id`, so the reporter retries until every plugin took it (a poll after a restart
 * may report the same work again).
 */
import type { Modality, Usage } from '../canonical/chat.ts';
import type { EmbedPurpose } from './embed.ts';

export interface MeteredWork {
  /** Stable: the same work reported again is recorded once (batch id, or one id per embed call). */
  id: string;
  source: 'batch' | 'video' | 'realtime' | EmbedPurpose;
  tenantId: string;
  organizationId: string | null;
  departmentId: string | null;
  callerKind: 'api_key' | 'jwt';
  apiKeyId: string | null;
  userId: string | null;
  /** The batch's endpoint, e.g. /v1/chat/completions; /v1/embeddings for the gateway's own embeddings. */
  endpoint: string;
  /** `realtime`: a realtime session's tokens and audio, reported once when it closes. */
  modality: Modality | 'realtime';
  provider: string;
  requestedModel: string | null;
  /** The configured model the work ran on (after policy overrides): its pricing prices the work. */
  model: string | null;
  upstreamModel: string | null;
  /** Summed over the work's requests. */
  usage: Usage;
  /** Video generation: the seconds of video a job made (priced at pricing.videoSecond); absent for other work. */
  videoSeconds?: number;
  /** Realtime sessions: the seconds of audio either side sent (priced at pricing.audioSecond). */
  audioSeconds?: number;
  requests: { total: number; completed: number; failed: number };
  status: 'completed' | 'failed' | 'cancelled' | 'expired';
  /** Ms since the epoch. */
  startedAt: number;
  endedAt: number;
}
