/**
 * A streamed POST /v1/responses: the Responses events OpenAI's client parses, each with its sequence_number.
 * response.created and response.in_progress first (a stored response is recorded in progress before them: that is
 * when the caller learns its id), the output items' events, then, once the record holds the end, the last event:
 * response.completed; response.incomplete (max_output_tokens reached, status incomplete; or cancelled, status
 * cancelled); or, after an upstream failure, an `error` event then response.failed (recorded failed).
 *
 * A stored stream is registered in liveResponses, so a cancel on this instance stops it at once (the upstream call
 * is aborted) with what it had produced; a cancel made on another instance is seen when this one next reads the
 * record (every RECORD_CHECK_INTERVAL_MS), and the partial output is then saved on the cancelled record. A caller
 * that goes away mid-stream leaves the response cancelled with its partial output (usage is metered regardless).
 */
import { responsesUsage, responseStatusOf } from '../canonical/responses.ts';
import { OutputAssembler, type ResponsesEvent } from '../canonical/responses-stream.ts';
import { chatRequestOf, type ChatCompletionChunk } from '../canonical/chat.ts';
import { nativeAnswerOf } from '../canonical/responses-native.ts';
import { toGatewayError } from '../errors.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import { cancelResponse, findResponse, saveCancelledOutput, type ResponseEnd, type ResponseUsage } from '../store/responses.ts';
import { encodeSse } from '../streaming/sse.ts';
import { startEventStream } from './chat.ts';
import type { LocalEndpointDeps } from './endpoint.ts';
import { responseObject, type ResponseView } from './responses-object.ts';
import { liveResponses } from './responses-live.ts';
import { endTurn, nativeEnd, recordTurn, unstoredView, type ResponseTurn } from './responses-turn.ts';

/** How often a stored stream reads its record to notice a cancel made on another instance. */
export const RECORD_CHECK_INTERVAL_MS = 1000;

const STOPPED = Symbol('stopped');
type Stop = 'local' | 'remote';

const FINAL_EVENT: Record<ResponseView['status'], string> = {
  in_progress: 'response.completed', completed: 'response.completed', incomplete: 'response.incomplete', cancelled: 'response.incomplete', failed: 'response.failed',
};

export async function streamResponse(ctx: GatewayContext, deps: LocalEndpointDeps, turn: ResponseTurn): Promise<void> {
  if (turn.store) await recordTurn(deps, turn);
  startEventStream(ctx, responseEvents(ctx, deps, turn, ctx.state.gw.stream!));
}

async function* responseEvents(ctx: GatewayContext, deps: LocalEndpointDeps, turn: ResponseTurn, chunks: AsyncIterable<ChatCompletionChunk>): AsyncGenerator<string> {
  const gw = ctx.state.gw;
  const assembler = new OutputAssembler();
  let sequence = 0;
  const frame = (event: ResponsesEvent) => encodeSse(JSON.stringify({ ...event, sequence_number: sequence++ }), event.type);
  const frames = (events: ResponsesEvent[]) => events.map(frame).join('');
  const partial = () => ({ output: assembler.output(), usage: responsesUsage(assembler.usage) });

  let stop: Stop | undefined;
  let wake: (value: typeof STOPPED) => void = () => {};
  const stopped = new Promise<typeof STOPPED>((resolve) => (wake = resolve));
  let closing: ResponsesEvent[] = [];
  const halt = (why: Stop) => {
    if (stop) return;
    stop = why;
    closing = assembler.close('incomplete');
    gw.abort(new Error('response cancelled'));
    wake(STOPPED);
  };
  const live = liveResponses(deps);
  let timer: NodeJS.Timeout | undefined;
  if (turn.store) {
    live.set(turn.id, {
      tenantId: turn.caller.tenantId,
      cancel: () => {
        halt('local');
        return partial();
      },
    });
    timer = setInterval(() => {
      findResponse(deps.db, turn.caller.tenantId, turn.id)
        .then((record) => { if (record?.status === 'cancelled') halt('remote'); })
        .catch(() => {}); // a failed read is retried at the next tick
    }, RECORD_CHECK_INTERVAL_MS);
    timer.unref();
  }
  let settled = false;
  const iterator = chunks[Symbol.asyncIterator]();
  try {
    yield frame({ type: 'response.created', response: responseObject(unstoredView(turn, { status: 'in_progress' })) })
      + frame({ type: 'response.in_progress', response: responseObject(unstoredView(turn, { status: 'in_progress' })) });
    let failure: unknown;
    try {
      while (!stop) {
        const pending = iterator.next();
        const next = await Promise.race([pending, stopped]);
        if (next === STOPPED) {
          pending.catch(() => {}); // the aborted upstream read ends in an abort error nobody waits for
          break;
        }
        if (next.done) break;
        const events = assembler.push(next.value);
        if (events.length > 0 && !stop) yield frames(events);
      }
    } catch (err) {
      if (!stop) failure = err;
    }
    live.delete(turn.id);
    clearInterval(timer);
    if (stop) {
      const view = await cancelledView(deps, turn, stop, partial());
      settled = true;
      yield frames(closing) + frame({ type: FINAL_EVENT[view.status], response: responseObject(view) });
      return;
    }
    if (failure !== undefined) {
      if (gw.signal.aborted) return; // the caller went away: recorded in finally
      const error = toGatewayError(failure);
      const closed = assembler.close('incomplete');
      const view = await endTurn(deps, turn, { ...endOf(ctx, assembler, deps, 'failed'), error: { code: error.code, message: error.message } });
      settled = true;
      yield frames(closed) + frame({ type: 'error', code: error.code, message: error.message, param: null }) + frame({ type: FINAL_EVENT[view.status], response: responseObject(view) });
      return;
    }
    const status = responseStatusOf(assembler.finishReason);
    const closed = assembler.close(status === 'incomplete' ? 'incomplete' : 'completed');
    const view = await endTurn(deps, turn, endOf(ctx, assembler, deps, status));
    settled = true;
    yield frames(closed) + frame({ type: FINAL_EVENT[view.status], response: responseObject(view) });
  } finally {
    live.delete(turn.id);
    clearInterval(timer);
    if (!settled) {
      // The caller went away (or the answer could not be written): stop upstream, keep what was produced.
      gw.abort(new Error('caller gone'));
      if (turn.store) await cancelResponse(deps.db, turn.caller.tenantId, turn.id, deps.clock.now(), partial()).catch(() => {});
    }
  }
}

/** The end of a stream; one a native Responses API answered records its final Response (output verbatim). */
function endOf(ctx: GatewayContext, assembler: OutputAssembler, deps: LocalEndpointDeps, status: ResponseEnd['status']): ResponseEnd {
  const native = status !== 'failed' ? nativeAnswerOf(chatRequestOf(ctx.state.gw.canonical!)) : undefined;
  if (native) return nativeEnd(native, deps.clock.now());
  return {
    status, output: assembler.output(), usage: responsesUsage(assembler.usage), model: assembler.model, providerResponseId: assembler.upstreamId, completedAt: deps.clock.now(),
  };
}

/**
 * The cancelled response: cancelled here, the cancel endpoint has written the record (with the partial output it
 * was handed); cancelled elsewhere, the record holds no output yet and this instance saves it.
 */
async function cancelledView(deps: LocalEndpointDeps, turn: ResponseTurn, stop: Stop, produced: { output: unknown[]; usage: ResponseUsage | null }): Promise<ResponseView> {
  const now = deps.clock.now();
  if (!turn.store) return unstoredView(turn, { status: 'cancelled', ...produced, completedAt: now });
  if (stop === 'remote') await saveCancelledOutput(deps.db, turn.id, produced.output, produced.usage);
  // A local cancel's endpoint records the cancel; should it not have yet, this does (a finished record stays as it is).
  const record = await cancelResponse(deps.db, turn.caller.tenantId, turn.id, now, produced);
  return record ?? (await findResponse(deps.db, turn.caller.tenantId, turn.id)) ?? unstoredView(turn, { status: 'cancelled', ...produced, completedAt: now });
}
