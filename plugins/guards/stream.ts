/**
 * The guards' response stage on a stream. Per request it runs in one mode:
 *
 * - `buffer` when a guard's policy says so: every chunk held until the end, then checked whole (a block ends the
 *   stream before anything was sent), redacted, and released.
 * - `window` when a guard's policy is window, or placeholders are to be restored: see window.ts.
 * - otherwise chunks pass untouched.
 *
 * Guards whose policy is `end` are checked on the whole text once the stream ended: the answer was sent, so their
 * verdicts are recorded as `log`. Scored guards (injection) check at the end or on the buffer; the operator's
 * detectors run after the stream completed (a stage cannot wait), recording only.
 */
import type { ChatCompletionChunk } from '../../core/canonical/chat.ts';
import type { ResponseStage } from '../../core/pipeline/context.ts';
import type { OutputPlan } from './plan.ts';
import type { Finding } from './scan.ts';
import { releaseBoundary, tailStart } from './window.ts';

type Choice = ChatCompletionChunk['choices'][number];

interface ChoiceState {
  pending: string;
  /** performance.now() when the oldest held character arrived. */
  heldSince: number;
  /** The whole text so far, for the guards checked at the end. */
  full: string;
  template: ChatCompletionChunk;
}

/** A held chunk count that ends the stream as a bug in the stages: far above what the window can hold. */
const WINDOW_HOLD_BACK = 1024;

export function streamStage(plan: OutputPlan, now: () => number = () => performance.now()): ResponseStage {
  const { guards, limits } = plan;
  const states = new Map<number, ChoiceState>();
  const buffered: ChatCompletionChunk[] = [];
  let held = 0;

  const stateOf = (index: number, chunk: ChatCompletionChunk) => {
    let st = states.get(index);
    if (!st) states.set(index, (st = { pending: '', heldSince: 0, full: '', template: chunk }));
    return st;
  };

  /** Checks `text` (held + new from `fresh`), throws on a block, returns what is released, redacted and restored. */
  const release = (st: ChoiceState, text: string, fresh: number, final: boolean, force: boolean): string => {
    const findings = plan.scanWindow(text);
    for (const f of findings) {
      if (f.action === 'block' && (final || f.end < text.length)) throw guards.block(f.guard, f.type, 'output');
    }
    const at = now();
    let tail = final ? text.length : tailStart(text, limits.chars, plan.phrases, plan.digits);
    if (!final && (force || (st.pending !== '' && at - st.heldSince >= limits.maxHoldMs))) tail = Math.max(tail, fresh);
    const boundary = releaseBoundary(text, tail, findings, final);
    const inside: Finding[] = findings.filter((f) => f.end <= boundary);
    guards.recordFindings(inside, 'output');
    const out = guards.restore(guards.redact(text.slice(0, boundary), inside, 'output'));
    st.heldSince = boundary >= fresh ? at : st.heldSince;
    st.pending = text.slice(boundary);
    return out;
  };

  const windowChunk = (chunk: ChatCompletionChunk): ChatCompletionChunk | ChatCompletionChunk[] | void => {
    let changed = false;
    let released = false;
    const choices = chunk.choices.map((choice): Choice => {
      const content = choice.delta?.content;
      const final = choice.finish_reason !== null && choice.finish_reason !== undefined;
      const st = stateOf(choice.index, chunk);
      if (typeof content !== 'string' || content === '') {
        if (!final || st.pending === '') return choice;
        changed = true;
        released = true;
        return { ...choice, delta: { ...choice.delta, content: release(st, st.pending, st.pending.length, true, false) } };
      }
      if (plan.keepsFull) st.full += content;
      st.template = chunk;
      const text = st.pending + content;
      const out = release(st, text, st.pending.length, final, held >= WINDOW_HOLD_BACK - 1);
      changed = true;
      if (out !== '') released = true;
      return { ...choice, delta: { ...choice.delta, content: out } };
    });
    if (!changed) return;
    const onlyText = !released && chunk.usage == null && choices.every((c) => c.finish_reason == null && !c.delta.tool_calls && !c.delta.role && !c.delta.refusal);
    if (onlyText) {
      held++;
      return [];
    }
    return { ...chunk, choices };
  };

  const flushWindow = (): ChatCompletionChunk[] => {
    const out: ChatCompletionChunk[] = [];
    for (const [index, st] of states) {
      if (st.pending === '') continue;
      const content = release(st, st.pending, st.pending.length, true, false);
      out.push({ ...st.template, choices: [{ index, delta: { content }, finish_reason: null }], usage: null });
    }
    return out;
  };

  const flushBuffer = (): ChatCompletionChunk[] => {
    const texts = new Map<number, string>();
    for (const chunk of buffered) {
      for (const c of chunk.choices) if (typeof c.delta?.content === 'string') texts.set(c.index, (texts.get(c.index) ?? '') + c.delta.content);
    }
    const finals = new Map<number, string>();
    for (const [index, text] of texts) {
      plan.scoreBuffer(text);
      finals.set(index, release(stateOf(index, buffered[0]!), text, 0, true, false));
    }
    return buffered.map((chunk) => ({
      ...chunk,
      choices: chunk.choices.map((c) => {
        if (typeof c.delta?.content !== 'string') return c;
        const content = finals.get(c.index) ?? '';
        finals.set(c.index, '');
        return { ...c, delta: { ...c.delta, content } };
      }),
    }));
  };

  return {
    holdBack: plan.mode === 'buffer' ? Number.POSITIVE_INFINITY : WINDOW_HOLD_BACK,
    chunk(chunk) {
      if (plan.mode === 'buffer') {
        buffered.push(chunk);
        if (plan.keepsFull) for (const c of chunk.choices) if (typeof c.delta?.content === 'string') stateOf(c.index, chunk).full += c.delta.content;
        return [];
      }
      if (plan.mode === 'window') return windowChunk(chunk);
      if (plan.keepsFull) for (const c of chunk.choices) if (typeof c.delta?.content === 'string') stateOf(c.index, chunk).full += c.delta.content;
      return undefined;
    },
    end() {
      const out = plan.mode === 'buffer' ? flushBuffer() : plan.mode === 'window' ? flushWindow() : [];
      for (const st of states.values()) plan.checkAtEnd(st.full);
      return out;
    },
    complete(outcome) {
      if (outcome.status !== 'completed' || !plan.keepsFull) return;
      plan.detectAfter([...states.values()].map((st) => st.full).join('\n'));
    },
  };
}
