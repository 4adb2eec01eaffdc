/**
 * POST /v1/responses served through the chat translators, so every chat provider serves it: the create body (and
 * the stored chain of a continuation) -> the canonical chat request pinned to one provider, and the chat answer ->
 * a Response. A provider with a native Responses API (openai, azure-openai) gets the native body too, and its
 * Response is what is recorded. With `store` (the default) the record is written before the caller sees the end
 * of the answer.
 */
import { callerOf } from '../pipeline/recorded-caller.ts';
import { chatRequestOf, chatResultOf } from '../canonical/chat.ts';
import { conversationMessages, inputItems, outputItemsOf, responsesUsage, responseStatusOf } from '../canonical/responses.ts';
import { chatBodyOf, type ResponsesCreateBody } from '../canonical/responses-request.ts';
import { nativeAnswerOf, nativeResponsesRequest } from '../canonical/responses-native.ts';
import { GatewayError, validationError, type ValidationIssue } from '../errors.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import { newResponseId, responseChain, responseNotFound, type ResponseEnd, type ResponseRecord } from '../store/responses.ts';
import { compileRequestSchema } from '../validation.ts';
import type { DispatchEndpoint, LocalEndpointDeps } from './endpoint.ts';
import { responseObject } from './responses-object.ts';
import { streamResponse } from './responses-stream.ts';
import { endTurn, nativeEnd, recordTurn, rememberTurn, turnOf, type ResponseTurn } from './responses-turn.ts';
import { BUILT_IN_ALIASES, responseObjectSchema, responsesRequestSchema, responsesStreamEventSchema } from './schemas/responses.ts';

/**
 * How many stored turns a continuation replays, the newest ones (this one's predecessor included): older turns
 * are left out of the conversation sent upstream. Bounds the recursive read and the request size.
 */
export const RESPONSE_CHAIN_MAX_DEPTH = 100;

const validateCreate = compileRequestSchema<ResponsesCreateBody>(responsesRequestSchema);

/** The provider the turn is pinned to: `provider`, the previous response's, or the model's first by routing. */
async function conversationOf(body: ResponsesCreateBody, ctx: GatewayContext, deps: LocalEndpointDeps, tenantId: string): Promise<{ provider: string; chain: ResponseRecord[] }> {
  const previousId = body.previous_response_id;
  if (previousId === undefined) {
    const provider = body.provider ?? deps.routing.resolve(body.model, ctx.state.gw.caller?.policy).targets[0]!.slug;
    return { provider, chain: [] };
  }
  const chain = await responseChain(deps.db, tenantId, previousId, RESPONSE_CHAIN_MAX_DEPTH);
  const previous = chain.at(-1);
  if (!previous || previous.id !== previousId) throw responseNotFound(previousId);
  if (body.provider !== undefined && body.provider !== previous.provider) {
    throw new GatewayError('FILE_PROVIDER_MISMATCH',
      `Response ${previousId} was produced by provider "${previous.provider}"; a continuation must use the same provider, not "${body.provider}"`,
      { provider: body.provider, previous_provider: previous.provider, previous_response_id: previousId });
  }
  return { provider: previous.provider, chain };
}

export async function parseResponsesBody(raw: unknown, ctx: GatewayContext, deps: LocalEndpointDeps) {
  const body = validateCreate(raw);
  const caller = callerOf(ctx);
  const { provider, chain } = await conversationOf(body, ctx, deps, caller.tenantId);
  const input = inputItems(body.input);
  const issues: ValidationIssue[] = [];
  const messages = conversationMessages(chain, body.instructions, input, issues);
  if (issues.length > 0) throw validationError(issues);
  rememberTurn(ctx, { id: newResponseId(), body, input, provider, store: body.store !== false, caller, createdAt: deps.clock.now() });
  const stream = body.stream === true;
  // On a provider with a native Responses API the turn goes there (core/dispatch/responses-call.ts); the chat body
  // stays for the plugins, and for its targets that serve it through chat.
  const support = deps.providers.get(provider)?.capabilities.responses;
  const native = support ? nativeResponsesRequest(body, input, chain, support) : null;
  return {
    modality: 'chat' as const, model: body.model, stream, includeUsage: false, provider, body: chatBodyOf(body, messages, BUILT_IN_ALIASES),
    ...(native ? { native } : {}),
  };
}


async function respondComplete(ctx: GatewayContext, deps: LocalEndpointDeps, turn: ResponseTurn): Promise<void> {
  const gw = ctx.state.gw;
  const result = chatResultOf(gw.result!);
  const native = nativeAnswerOf(chatRequestOf(gw.canonical!));
  const end: ResponseEnd = native ? nativeEnd(native, deps.clock.now()) : {
    status: responseStatusOf(result.choices[0]?.finish_reason),
    output: outputItemsOf(result),
    usage: responsesUsage(result.usage),
    model: result.model || (gw.target?.upstreamModel ?? null),
    providerResponseId: result.id || null,
    completedAt: deps.clock.now(),
  };
  if (turn.store) await recordTurn(deps, turn);
  const view = await endTurn(deps, turn, end);
  ctx.status = 200;
  ctx.body = responseObject(view);
}

export const responsesCreateEndpoint: DispatchEndpoint = {
  kind: 'dispatch',
  method: 'POST',
  path: '/v1/responses',
  capability: 'responses',
  summary: 'Create a response or continue one (previous_response_id), streaming or not; served by any chat provider and stored unless store is false.',
  errorEnvelope: 'canonical',
  requestSchema: responsesRequestSchema,
  responses: {
    '200': { description: 'The response; with stream true, a text/event-stream of named Responses events.', schema: responseObjectSchema },
    '200-stream': { description: 'Streaming event', schema: responsesStreamEventSchema, contentType: 'text/event-stream' },
  },
  parse: parseResponsesBody,
  async respond(ctx, deps) {
    const turn = turnOf(ctx);
    if (ctx.state.gw.stream) await streamResponse(ctx, deps, turn);
    else await respondComplete(ctx, deps, turn);
  },
};
