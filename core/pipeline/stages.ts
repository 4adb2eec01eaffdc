/**
 * The response path: each plugin's stages, applied in reverse pipeline order. A complete answer passes a
 * plugin's result stages as control leaves that plugin; a stream is composed once, at the route entry, into
 * one generator that passes each chunk through every stage, nearest the dispatcher first.
 */
import type { ChatCompletionChunk, Usage } from '../canonical/chat.ts';
import { toGatewayError, type GatewayError } from '../errors.ts';
import type { GatewayContext, GatewayMiddleware, GatewayState, ResponseStage, StreamOutcome, StreamStatus } from './context.ts';
import type { PluginLogger } from './services.ts';

interface Registered {
  /** The position of the registering plugin in its pipeline. */
  plugin: number;
  stage: ResponseStage;
}

/** The request's stages and the plugin whose code is running; kept off the public state type. */
export class StageList {
  current = -1;
  readonly entries: Registered[] = [];
  /** Time spent in each position's wrapper (the dispatcher's after the last plugin's), ms, for pluginMs. */
  readonly spent: number[] = [];

  add(stage: ResponseStage): void {
    this.entries.push({ plugin: this.current, stage });
  }

  /** Nearest the dispatcher first: by plugin position descending, a plugin's own stages last-registered first. */
  ordered(): ResponseStage[] {
    return this.entries.map((entry, i) => ({ ...entry, i }))
      .sort((a, b) => b.plugin - a.plugin || b.i - a.i)
      .map((entry) => entry.stage);
  }
}

// A property under a private symbol rather than a WeakMap: a WeakMap keyed by every request grows and rehashes its
// table, and the collector must trace its entries as ephemerons.
const STAGES = Symbol('aigw.stages');

type WithStages = GatewayState & { [STAGES]?: StageList };

export function attachStages(gw: GatewayState, list: StageList): void {
  (gw as WithStages)[STAGES] = list;
}

/**
 * Wraps the plugin at `position`: its stage registrations are attributed to it, its result stages applied as it
 * returns, and its own time (from entry to return, minus the time spent downstream of it) noted in
 * gw.observed.pluginMs for the overhead metric. What is downstream of a plugin is the next plugin's wrapper, whose
 * time is in the request's StageList: only the last plugin's `next` (the dispatcher) is timed by a wrapper of its
 * own (koa-compose lets a middleware call next once). A timed `next` per plugin was an async closure and a promise
 * more per plugin and request.
 */
export function positioned(position: number, middleware: GatewayMiddleware, last: boolean): GatewayMiddleware {
  return async (ctx: GatewayContext, next) => {
    const list = (ctx.state.gw as WithStages)[STAGES];
    if (!list) return middleware(ctx, next);
    const gw = ctx.state.gw;
    const entered = performance.now();
    list.current = position;
    try {
      await middleware(ctx, last ? timedNext(list, position, next) : next);
      list.current = position - 1;
      if (!gw.result || gw.stream) return;
      for (let i = list.entries.length - 1; i >= 0; i--) {
        const { plugin, stage } = list.entries[i]!;
        if (plugin !== position || !stage.result) continue;
        const replaced = await stage.result(gw.result);
        if (replaced) gw.result = replaced;
      }
    } finally {
      // Control goes back to the plugin before this one, whether this one returned or threw.
      list.current = position - 1;
      const spent = performance.now() - entered;
      list.spent[position] = spent;
      gw.observed.pluginMs[position] = spent - (list.spent[position + 1] ?? 0);
    }
  };
}

/** The last plugin's `next`: the dispatcher, timed as the time downstream of that plugin. */
function timedNext(list: StageList, position: number, next: () => Promise<unknown>): () => Promise<void> {
  return async () => {
    const left = performance.now();
    try {
      await next();
    } finally {
      list.spent[position + 1] = performance.now() - left;
      list.current = position;
    }
  };
}

/** What a stage returned for one chunk, as a list. */
function outputOf(returned: ChatCompletionChunk | readonly ChatCompletionChunk[] | void, chunk: ChatCompletionChunk): readonly ChatCompletionChunk[] {
  if (returned === undefined) return [chunk];
  return Array.isArray(returned) ? returned : [returned as ChatCompletionChunk];
}

interface Seen {
  usage: Usage | null;
  chunks: number;
  held: number;
}

/** Counts what a stage kept of the one chunk it was given (`out` chunks came out); past its holdBack, a bug. */
function hold(stage: ResponseStage, state: Seen, out: number): void {
  state.held += 1 - out;
  if (state.held > (stage.holdBack ?? 0)) {
    throw new Error(`a response stage holds ${state.held} chunks back, more than its holdBack (${stage.holdBack ?? 0})`);
  }
}

/**
 * Passes a stream through the stages (nearest the dispatcher first) and tells each, exactly once, how it ended:
 * completed, aborted (the consumer stopped reading) or failed (the upstream, or a stage that ended it). A stage
 * that ends the stream is a consumer that stopped reading for the stages before it: they are told aborted, not
 * its error, which never passed them (as a complete answer's stage error never reaches the earlier result stages).
 */
export async function* stagedStream(
  source: AsyncIterable<ChatCompletionChunk>,
  stages: readonly ResponseStage[],
  signal: AbortSignal,
  logger: PluginLogger,
): AsyncGenerator<ChatCompletionChunk> {
  const seen: Seen[] = stages.map(() => ({ usage: null, chunks: 0, held: 0 }));
  let status: StreamStatus = 'aborted';
  let error: GatewayError | undefined;
  /** The stage whose code is running, or -1 (the source, or between stages). */
  let running = -1;
  /** The stage that ended the stream; the stages before it saw their consumer stop. */
  let failedAt = -1;

  /** Chunks entering stage `from`, through the rest; what comes out of the last one. */
  const through = (chunks: readonly ChatCompletionChunk[], from: number): readonly ChatCompletionChunk[] => {
    let current = chunks;
    for (let i = from; i < stages.length && current.length > 0; i++) {
      const stage = stages[i]!;
      const state = seen[i]!;
      const next: ChatCompletionChunk[] = [];
      for (const chunk of current) {
        state.chunks++;
        if (chunk.usage) state.usage = chunk.usage;
        running = i;
        const out = stage.chunk ? outputOf(stage.chunk(chunk), chunk) : [chunk];
        hold(stage, state, out.length);
        next.push(...out);
      }
      current = next;
    }
    running = -1;
    return current;
  };

  /**
   * One chunk from the source through every stage. While each stage passes on one chunk (itself or a replacement),
   * no list is made; from a stage that holds it back or releases several, the rest goes through `through`.
   */
  const throughOne = (chunk: ChatCompletionChunk): ChatCompletionChunk | readonly ChatCompletionChunk[] => {
    let current = chunk;
    for (let i = 0; i < stages.length; i++) {
      const stage = stages[i]!;
      const state = seen[i]!;
      state.chunks++;
      if (current.usage) state.usage = current.usage;
      if (!stage.chunk) continue;
      running = i;
      const returned = stage.chunk(current);
      if (returned === undefined) continue;
      if (!Array.isArray(returned)) {
        current = returned as ChatCompletionChunk;
        continue;
      }
      hold(stage, state, returned.length);
      return through(returned as readonly ChatCompletionChunk[], i + 1);
    }
    running = -1;
    return current;
  };

  try {
    for await (const chunk of source) {
      const out = throughOne(chunk);
      if (!Array.isArray(out)) yield out as ChatCompletionChunk;
      else for (const each of out as readonly ChatCompletionChunk[]) yield each;
    }
    for (let i = 0; i < stages.length; i++) {
      running = i;
      const released = stages[i]!.end?.() ?? [];
      seen[i]!.held = 0;
      for (const out of through(released, i + 1)) yield out;
    }
    status = 'completed';
  } catch (err) {
    failedAt = signal.aborted ? -1 : running;
    status = signal.aborted ? 'aborted' : 'failed';
    // A client that left is not an error of the stream: only a failure carries one. A stage's own bug ends the
    // stream too (a guard that failed must not let its text through), answered as INTERNAL_ERROR.
    if (status === 'failed') error = toGatewayError(err);
    throw err;
  } finally {
    stages.forEach((stage, i) => {
      if (!stage.complete) return;
      const { usage, chunks } = seen[i]!;
      const outcome: StreamOutcome = i < failedAt ? { status: 'aborted', usage, chunks }
        : error ? { status, usage, chunks, error } : { status, usage, chunks };
      try {
        stage.complete(outcome);
      } catch (err) {
        logger.error({ err }, 'a response stage failed on completion');
      }
    });
  }
}
