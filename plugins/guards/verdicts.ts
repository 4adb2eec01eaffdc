/**
 * One request's guard bookkeeping: the verdicts it appends to gw.guardVerdicts (aggregated by guard, type,
 * action and direction, never with the matched text), the placeholders of what it redacted, and the errors it
 * refuses with.
 */
import { GatewayError } from '../../core/errors.ts';
import type { GatewayState, GuardVerdict } from '../../core/pipeline/context.ts';
import type { Direction } from './config.ts';
import type { Finding } from './scan.ts';

const PLACEHOLDER = /\[([A-Z][A-Z_]*_\d+)\]/g;

export class RequestGuards {
  /** Placeholder -> original, for restore. */
  private readonly originals = new Map<string, string>();
  /** `LABEL\u0000original` -> placeholder: the same value gets the same placeholder within a request. */
  private readonly placeholders = new Map<string, string>();
  private readonly counters = new Map<string, number>();

  constructor(private readonly gw: GatewayState, readonly restoring: boolean) {}

  record(verdict: Omit<GuardVerdict, 'count'>, count = 1): void {
    if (count <= 0) return;
    const list = (this.gw.guardVerdicts ??= []);
    const same = list.find((v) => v.guard === verdict.guard && v.type === verdict.type && v.action === verdict.action && v.direction === verdict.direction);
    if (!same) {
      list.push({ ...verdict, count });
      return;
    }
    same.count += count;
    if (verdict.score !== undefined) same.score = Math.max(same.score ?? 0, verdict.score);
  }

  recordFindings(findings: readonly Finding[], direction: Direction, action?: GuardVerdict['action']): void {
    for (const f of findings) this.record({ guard: f.guard, type: f.type, action: action ?? f.action, direction });
  }

  /** A refusal; its verdict is recorded first. Details name the guard and the reason, never the text. */
  block(guard: string, reason: string, direction: Direction, score?: number): GatewayError {
    this.record({ guard, type: reason, action: 'block', direction, ...(score === undefined ? {} : { score }) });
    const what = direction === 'input' ? 'The prompt' : 'The answer';
    return new GatewayError('GUARD_BLOCKED', `${what} was blocked by the ${guard} guard (${reason})`, { guard, reason });
  }

  /**
   * The text with every redacting finding replaced (findings in text order, within the text). Only the prompt's
   * placeholders are put back into the answer: one the answer's own redaction made stays a placeholder.
   */
  redact(text: string, findings: readonly Finding[], direction: Direction): string {
    let out = '';
    let at = 0;
    for (const f of findings) {
      if (f.action !== 'redact') continue;
      out += text.slice(at, f.start) + this.placeholderFor(f.label, f.guard === 'pii' ? text.slice(f.start, f.end) : null, direction === 'input');
      at = f.end;
    }
    return at === 0 ? text : out + text.slice(at);
  }

  private placeholderFor(label: string, original: string | null, restorable: boolean): string {
    // Toxic words are never put back: one placeholder for all.
    if (original === null) return `[${label}]`;
    const key = `${label}\u0000${original}`;
    let placeholder = this.placeholders.get(key);
    if (!placeholder) {
      const n = (this.counters.get(label) ?? 0) + 1;
      this.counters.set(label, n);
      placeholder = `[${label}_${n}]`;
      this.placeholders.set(key, placeholder);
      if (restorable) this.originals.set(placeholder, original);
    }
    return placeholder;
  }

  /** Whether restore has anything to put back. */
  get restores(): boolean {
    return this.restoring && this.originals.size > 0;
  }

  /** The answer's placeholders of this request's redactions, replaced by the originals (restore: true). */
  restore(text: string): string {
    if (!this.restores || !text.includes('[')) return text;
    return text.replace(PLACEHOLDER, (whole) => this.originals.get(whole) ?? whole);
  }
}
