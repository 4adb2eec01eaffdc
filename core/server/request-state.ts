/**
 * ctx.state.gw, the request's state. A class, so that `signal` is a getter on its prototype. As an object literal
 * with a getter of its own, V8 did not let the state die young: everything it reached (Koa's context, the request
 * and response objects, their headers) survived two scavenges and was promoted, about 10 KB per request and most
 * of the old generation's growth under load; as an instance of this class, none of it is (bench/analysis.md).
 * Measured with V8's allocation-site pretenuring on, which bin/aigw.js has since turned off for the same kind of
 * promotion.
 */
import type { Context } from 'koa';
import type { CanonicalRequest } from '../canonical/chat.ts';
import { GatewayError } from '../errors.ts';
import type { LocalEndpointDeps, EndpointDefinition } from '../ingress/endpoint.ts';
import { newObservation } from '../observability/observed.ts';
import type { RequestAbort } from '../pipeline/abort.ts';
import type { GatewayContext, GatewayState, RequestObservation, ResponseStage } from '../pipeline/context.ts';
import type { StageList } from '../pipeline/stages.ts';

export interface RequestStateParts {
  endpoint: EndpointDefinition;
  pipeline: string;
  clientIp: string;
  plugins: number;
  abort: RequestAbort;
  stages: StageList;
  readBody: (ctx: Context) => Promise<unknown>;
  deps: LocalEndpointDeps;
}

export class RequestState implements GatewayState {
  readonly requestId: string;
  readonly endpoint: EndpointDefinition;
  readonly pipeline: string;
  readonly startedAt = performance.now();
  readonly clientIp: string;
  readonly observed: RequestObservation;
  // Own functions rather than methods: plugins may pass them around unbound.
  readonly abort: (reason?: unknown) => void;
  readonly stage: (stage: ResponseStage) => void;
  readonly request: () => Promise<CanonicalRequest>;
  private readonly cancel: RequestAbort;
  // Set later by plugins and the core: declared, not defined, so a new state has none of them.
  declare caller?: GatewayState['caller'];
  declare canonical?: GatewayState['canonical'];
  declare target?: GatewayState['target'];
  declare result?: GatewayState['result'];
  declare retrieval?: GatewayState['retrieval'];
  declare usageEstimated?: GatewayState['usageEstimated'];
  declare stream?: GatewayState['stream'];
  declare servedFromCache?: GatewayState['servedFromCache'];
  declare guardVerdicts?: GatewayState['guardVerdicts'];

  constructor(ctx: GatewayContext, parts: RequestStateParts) {
    const { endpoint, abort, stages, readBody, deps } = parts;
    this.requestId = ctx.state.requestId;
    this.endpoint = endpoint;
    this.pipeline = parts.pipeline;
    this.clientIp = parts.clientIp;
    this.observed = newObservation(parts.plugins);
    this.cancel = abort;
    this.abort = (reason) => abort.abort(reason);
    this.stage = (stage) => stages.add(stage);
    let parsed: Promise<CanonicalRequest> | undefined;
    this.request = () => {
      if (endpoint.kind !== 'dispatch') return Promise.reject(new GatewayError('INTERNAL_ERROR', `${endpoint.path} takes no request body`));
      parsed ??= readBody(ctx).then(async (body) => {
        const request = await endpoint.parse(body, ctx, deps);
        this.canonical = request;
        return request;
      });
      return parsed;
    };
  }

  /** Made on first read (core/pipeline/abort.ts). */
  get signal(): AbortSignal {
    return this.cancel.signal;
  }
}
