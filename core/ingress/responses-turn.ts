/**
 * One POST /v1/responses turn between parse and respond: what the answer and the record need besides the
 * canonical request, and the record's writes (in progress, then the end).
 */
import type { RecordedCaller } from '../pipeline/recorded-caller.ts';
import { responsesUsage, type InputItem } from '../canonical/responses.ts';
import { usageOfNative, type NativeResponse } from '../canonical/responses-native.ts';
import type { ResponsesCreateBody } from '../canonical/responses-request.ts';
import { GatewayError } from '../errors.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import { findResponse, finishResponse, insertResponse, type ResponseEnd, type ResponseRecord } from '../store/responses.ts';
import type { LocalEndpointDeps } from './endpoint.ts';
import type { ResponseView } from './responses-object.ts';

/** What respond needs of the create request besides the canonical request. */
export interface ResponseTurn {
  id: string;
  body: ResponsesCreateBody;
  input: InputItem[];
  provider: string;
  store: boolean;
  caller: RecordedCaller;
  createdAt: number;
}

const turns = new WeakMap<GatewayContext, ResponseTurn>();

export function rememberTurn(ctx: GatewayContext, turn: ResponseTurn): void {
  turns.set(ctx, turn);
}

export function turnOf(ctx: GatewayContext): ResponseTurn {
  const turn = turns.get(ctx);
  if (!turn) throw new GatewayError('INTERNAL_ERROR', 'A response was answered without its request');
  return turn;
}

/** Records the turn in progress (before a stream's first event, or just before the end of a complete answer). */
export function recordTurn(deps: LocalEndpointDeps, turn: ResponseTurn): Promise<ResponseRecord> {
  return insertResponse(deps.db, turn.id, {
    tenantId: turn.caller.tenantId, provider: turn.provider, requestedModel: turn.body.model,
    previousResponseId: turn.body.previous_response_id ?? null, instructions: turn.body.instructions ?? null, input: turn.input,
    metadata: turn.body.metadata ?? null, callerKind: turn.caller.callerKind, apiKeyId: turn.caller.apiKeyId, userId: turn.caller.userId,
  });
}

/** The view of a turn that is not stored (store: false), or not yet: what its record would hold. */
export function unstoredView(turn: ResponseTurn, end: Omit<Partial<ResponseEnd>, 'status'> & Pick<ResponseView, 'status'>): ResponseView {
  return {
    id: turn.id, provider: turn.provider, providerResponseId: end.providerResponseId ?? null, requestedModel: turn.body.model, model: end.model ?? null,
    previousResponseId: turn.body.previous_response_id ?? null, status: end.status, instructions: turn.body.instructions ?? null,
    output: end.output ?? [], usage: end.usage ?? null, error: end.error ?? null, metadata: turn.body.metadata ?? null,
    createdAt: turn.createdAt, completedAt: end.completedAt ?? null,
  };
}

/** The record's end, or (not stored) the view; a store that lost the race to a cancel answers the cancelled record. */
export async function endTurn(deps: LocalEndpointDeps, turn: ResponseTurn, end: ResponseEnd): Promise<ResponseView> {
  if (!turn.store) return unstoredView(turn, end);
  const finished = await finishResponse(deps.db, turn.id, end);
  if (finished) return finished;
  return (await findResponse(deps.db, turn.caller.tenantId, turn.id)) ?? unstoredView(turn, end);
}

/** The record's end of a turn a native Responses API answered: its output items verbatim, its id and usage. */
export function nativeEnd(response: NativeResponse, completedAt: number): ResponseEnd {
  return {
    status: response.status === 'incomplete' ? 'incomplete' : 'completed',
    output: response.output,
    usage: responsesUsage(usageOfNative(response.usage)),
    model: typeof response.model === 'string' ? response.model : null,
    providerResponseId: response.id,
    completedAt,
  };
}
