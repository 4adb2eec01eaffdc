/**
 * Credentials of well-known formats, as one alternation compiled once. Each alternative is anchored on the
 * format's fixed prefix, so a text without any of them costs one linear pass. The names are documentation
 * (docs/guards.md lists them); a verdict says `secret` and never which, nor the text.
 */
export const SECRET_FORMATS: ReadonlyArray<{ name: string; source: string }> = [
  { name: 'Anthropic API key (sk-ant-...)', source: String.raw`sk-ant-[A-Za-z0-9]{2,12}-[A-Za-z0-9_-]{32,}` },
  { name: 'OpenAI API key (sk-..., sk-proj-..., sk-svcacct-...)', source: String.raw`sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}` },
  { name: 'AWS access key id (AKIA..., ASIA...)', source: String.raw`(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])` },
  { name: 'GitHub token (ghp_, gho_, ghu_, ghs_, ghr_)', source: String.raw`gh[pousr]_[A-Za-z0-9]{36,}` },
  { name: 'GitHub fine-grained token (github_pat_...)', source: String.raw`github_pat_[A-Za-z0-9_]{22,}` },
  { name: 'Slack token (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-)', source: String.raw`xox[abprs]-[A-Za-z0-9-]{10,}` },
  { name: 'Google API key (AIza...)', source: String.raw`AIza[0-9A-Za-z_-]{35}` },
  { name: 'Stripe live secret or restricted key (sk_live_, rk_live_)', source: String.raw`[sr]k_live_[0-9A-Za-z]{20,}` },
  { name: 'Private key PEM block (-----BEGIN ... PRIVATE KEY-----)', source: String.raw`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----)?` },
  { name: 'JSON Web Token (eyJ....eyJ....sig)', source: String.raw`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}` },
];

/** Not preceded by a letter, digit, `_` or `-`: a key starts a token (so `task-ant-...` is no Anthropic key). */
export const SECRETS = new RegExp(`(?<![A-Za-z0-9_-])(?:${SECRET_FORMATS.map((f) => f.source).join('|')})`, 'g');

/** The formats' fixed prefixes, without look-behind: a text with none of them skips SECRETS. */
export const SECRET_HINT = /sk-|AKIA|ASIA|gh[pousr]_|github_pat_|xox[abprs]-|AIza|k_live_|-----BEGIN|eyJ/;
