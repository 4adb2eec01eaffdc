/** Reading the project's markdown for the docs tests: prose without code, headings' anchors, links. */

/** The text with fenced code blocks blanked (line numbers kept); inline code stays, it names things. */
export function withoutFences(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ''));
}

/** The fenced code blocks of the text whose info string is one of `languages`. */
export function fences(text: string, languages: readonly string[]): string[] {
  return [...text.matchAll(/^```([a-z]*)\n([\s\S]*?)^```$/gm)].filter((m) => languages.includes(m[1]!)).map((m) => m[2]!);
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2, ... */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const match of withoutFences(text).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const base = match[1]!.toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** Relative link targets of the prose (not URLs with a scheme, not mail): `path`, `path#anchor` or `#anchor`. */
export function relativeLinks(text: string): string[] {
  const prose = withoutFences(text).replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** Sentences and table rows, one per item, for checks that look at what one statement says. */
export function statements(text: string): string[] {
  return withoutFences(text).split(/\n\s*\n/).flatMap((paragraph) => {
    const lines = paragraph.split('\n');
    if (lines.every((line) => line.startsWith('|'))) return lines;
    return paragraph.replace(/\s*\n\s*/g, ' ').split(/(?<=[.;!?])\s+(?=[A-Z`(*[])/);
  });
}
