/**
 * Prompt injection, scored: each heuristic that matches adds its weight, the sum capped at 1. The heuristics are
 * the phrasings of published injection and jailbreak corpora (override the instructions, reveal the system
 * prompt, switch persona, forge a role marker); an operator adds their own patterns, and a model-based
 * detector through `detectors` (detectors.ts). Compiled once per pipeline entry.
 */
export interface InjectionRule {
  name: string;
  regex: RegExp;
  weight: number;
  /** Lower-case words one of which every match contains: a text with none skips the regex (most texts). */
  hints?: readonly string[];
}

/** Case-insensitive, and multi-line so that `^` is a line start (a forged role marker opens a line). */
const rule = (name: string, source: string, weight: number, hints?: readonly string[]): InjectionRule => ({ name, regex: new RegExp(source, 'im'), weight, ...(hints ? { hints } : {}) });
const OVERRIDE = ['ignore', 'disregard', 'forget', 'override'];

export const BUILT_IN_RULES: readonly InjectionRule[] = [
  rule('override', String.raw`\b(?:ignore|disregard|forget|override)\b[\s\S]{0,30}?\b(?:previous|prior|above|earlier|preceding|your|system)\b[\s\S]{0,20}?\b(?:instructions?|prompts?|rules|directions|guidelines|context)\b`, 0.6, OVERRIDE),
  rule('override-all', String.raw`\b(?:ignore|disregard|forget|override)\s+(?:all|any|every)\s+(?:of\s+)?(?:the\s+)?(?:instructions|rules|guidelines)\b`, 0.6, OVERRIDE),
  rule('reveal', String.raw`\b(?:reveal|show|print|repeat|output|display|leak|tell me)\b[\s\S]{0,30}?\b(?:system prompt|initial prompt|hidden (?:prompt|instructions)|your instructions|the instructions above|developer message)\b`, 0.6, ['system prompt', 'initial prompt', 'hidden', 'your instructions', 'instructions above', 'developer message']),
  rule('persona', String.raw`\b(?:you are now|from now on,? you are|act as|pretend (?:to be|you are)|roleplay as)\b[\s\S]{0,40}?\b(?:DAN|do anything now|unfiltered|uncensored|unrestricted|jailbroken|developer mode|evil|without (?:any )?(?:rules|restrictions|limits|filters))\b`, 0.5, ['you are now', 'from now on', 'act as', 'pretend', 'roleplay as']),
  rule('jailbreak', String.raw`\b(?:jailbreak|jail-break|do anything now|developer mode enabled|DAN mode)\b`, 0.35, ['jailbreak', 'jail-break', 'do anything now', 'developer mode', 'dan mode']),
  rule('no-limits', String.raw`\b(?:no|without|bypass|disable|turn off)\b\s+(?:any\s+)?(?:safety|content)?\s*(?:restrictions|filters|guardrails|limitations|policies|moderation)\b`, 0.3, ['restrictions', 'filters', 'guardrails', 'limitations', 'policies', 'moderation']),
  rule('chat-markup', String.raw`(?:<\|im_start\|>\s*system|<\/?system>|\[\/?INST\]|<<SYS>>)`, 0.5, ['<|im_start|>', 'system>', '[inst]', '[/inst]', '<<sys>>']),
  rule('role-line', String.raw`^\s*(?:#{2,}\s*)?(?:system|instructions?)\s*:`, 0.3, ['system', 'instruction']),
  rule('new-instructions', String.raw`\b(?:new|updated|real|actual)\s+instructions\s*:`, 0.35, ['instructions']),
];

export interface InjectionScore { score: number; rules: string[] }

export function injectionScorer(extra: ReadonlyArray<{ pattern: string; weight: number }>): (text: string) => InjectionScore {
  const rules = [...BUILT_IN_RULES, ...extra.map((p, i) => rule(`pattern-${i}`, p.pattern, p.weight))];
  // One pass for every built-in hint: most texts have none, and skip the rules altogether.
  const anyHint = new RegExp(BUILT_IN_RULES.flatMap((r) => r.hints ?? []).map((h) => h.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'i');
  return (text) => {
    let score = 0;
    const matched: string[] = [];
    const hinted = anyHint.test(text);
    const lower = hinted ? text.toLowerCase() : '';
    for (const r of rules) {
      if (r.hints && (!hinted || !r.hints.some((hint) => lower.includes(hint)))) continue;
      if (!r.regex.test(text)) continue;
      score += r.weight;
      matched.push(r.name);
    }
    return { score: Math.min(1, Math.round(score * 1000) / 1000), rules: matched };
  };
}
