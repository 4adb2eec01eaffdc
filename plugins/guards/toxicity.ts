/**
 * Toxic language: whole words and phrases of categorized lists, as one case-insensitive alternation compiled
 * once per pipeline entry (longest first, so that "motherfucker" wins over "fucker"). The built-in lists are short
 * on purpose: they catch the unambiguous, and an operator adds the words of their own domain and languages.
 */
export const BUILT_IN_LISTS: Readonly<Record<string, readonly string[]>> = {
  profanity: ['fuck', 'fucking', 'fucked', 'fucker', 'motherfucker', 'shit', 'bullshit', 'bitch', 'bastard', 'asshole', 'dickhead', 'cunt'],
  insult: ['idiot', 'moron', 'imbecile', 'dumbass', 'scumbag', 'retard', 'worthless piece of'],
  threat: ['kill you', 'i will kill', 'kill yourself', 'die in a fire', 'i will hurt you'],
};

export interface ToxicityMatcher {
  /** Null when no list has a word. */
  regex: RegExp | null;
  categoryOf(word: string): string;
  /** The most words one entry has. */
  maxWords: number;
  /**
   * Whether whole words (lower case, single spaces) begin a listed phrase ("kill" of "kill you"): a stream window
   * holds them back with the unfinished word after them, so that a phrase split across chunks is caught.
   */
  startsPhrase(words: string): boolean;
}

const escape = (word: string) => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const normalize = (text: string) => text.toLowerCase().replace(/\s+/g, ' ');

export function toxicityMatcher(builtIn: boolean, categories: Record<string, string[]>): ToxicityMatcher {
  const lists: Record<string, readonly string[]> = { ...(builtIn ? BUILT_IN_LISTS : {}), ...categories };
  const category = new Map<string, string>();
  for (const [name, words] of Object.entries(lists)) for (const word of words) category.set(normalize(word), name);
  const words = [...category.keys()].sort((a, b) => b.length - a.length);
  const maxWords = words.reduce((max, word) => Math.max(max, word.split(' ').length), 1);
  const prefixes = new Set<string>();
  for (const word of words) {
    const parts = word.split(' ');
    for (let n = 1; n < parts.length; n++) prefixes.add(parts.slice(0, n).join(' '));
  }
  const body = words.map((word) => word.split(' ').map(escape).join('\\s+')).join('|');
  return {
    regex: words.length === 0 ? null : new RegExp(`(?<![\\p{L}\\p{N}_])(?:${body})(?![\\p{L}\\p{N}_])`, 'giu'),
    categoryOf: (word) => category.get(normalize(word)) ?? 'other',
    maxWords,
    startsPhrase: (text) => prefixes.has(normalize(text)),
  };
}
