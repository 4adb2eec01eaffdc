/** Every data-plane endpoint the gateway serves, one line each; pipelines attach to these paths. */
import { batchesEndpoints } from './batches.ts';
import { filesEndpoints } from './files.ts';
import { modelsEndpoint } from './models.ts';
import { proxyEndpoints } from './proxy.ts';
import { realtimeEndpoints } from './realtime.ts';
import { responsesReadEndpoints } from './responses.ts';
import { vectorStoresEndpoints } from './vector-stores.ts';
import { videoEndpoints } from './video.ts';
import { transcriptionsEndpoint, translationsEndpoint } from '../ingress/audio.ts';
import { chatCompletionsEndpoint } from '../ingress/chat.ts';
import { completionsEndpoint } from '../ingress/completions.ts';
import { embeddingsEndpoint } from '../ingress/embeddings.ts';
import type { EndpointDefinition } from '../ingress/endpoint.ts';
import { messagesEndpoint } from '../ingress/messages.ts';
import { rerankEndpoint } from '../ingress/rerank.ts';
import { imagesEndpoint } from '../ingress/images.ts';
import { imageProgressEndpoint } from './image-progress.ts';
import { speechEndpoint } from '../ingress/speech.ts';
import { responsesCreateEndpoint } from '../ingress/responses.ts';
import { videoGenerationsEndpoint } from '../ingress/video.ts';

export const endpoints: readonly EndpointDefinition[] = [chatCompletionsEndpoint, messagesEndpoint, completionsEndpoint, embeddingsEndpoint, rerankEndpoint, transcriptionsEndpoint, translationsEndpoint, speechEndpoint, imagesEndpoint, imageProgressEndpoint, videoGenerationsEndpoint, responsesCreateEndpoint, modelsEndpoint, ...filesEndpoints, ...batchesEndpoints, ...responsesReadEndpoints, ...vectorStoresEndpoints, ...videoEndpoints, ...realtimeEndpoints, ...proxyEndpoints];

/** The route names pipelines.yaml may list (the passthrough's several methods share `/proxy`). */
export const endpointPaths = (): string[] => [...new Set(endpoints.map((e) => e.path))];
