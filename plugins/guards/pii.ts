/**
 * The PII finders, one per type, built once per pipeline entry. Each returns the spans it found in a text; the
 * scanner (scan.ts) decides what to do with them. Patterns are compiled here, never per request or per chunk.
 *
 * By hand, with the reason: the Luhn check (ten lines, and the card libraries check only a whole number, not a
 * text); e-mail, IP and national id patterns (a regular expression each). By library: phone numbers
 * (libphonenumber-js: numbering plans are data no pattern keeps up with), issuer prefixes and lengths of cards
 * (credit-card-type), IBAN country lengths and the mod-97 check (ibantools).
 */
import creditCardType from 'credit-card-type';
import { electronicFormatIBAN, isValidIBAN } from 'ibantools';
import { findPhoneNumbersInText, type CountryCode } from 'libphonenumber-js/min';
import { isIP } from 'node:net';
import type { PiiType } from './config.ts';
import { SECRET_HINT, SECRETS } from './secrets.ts';

export interface Span { start: number; end: number }
export type Finder = (text: string) => Span[];

function* matches(regex: RegExp, text: string): Generator<RegExpExecArray> {
  regex.lastIndex = 0;
  for (let m = regex.exec(text); m; m = regex.exec(text)) {
    if (m[0] === '') regex.lastIndex++;
    yield m;
  }
}

const spansOf = (regex: RegExp, accept: (match: string) => boolean = () => true): Finder => (text) => {
  const out: Span[] = [];
  for (const m of matches(regex, text)) if (accept(m[0])) out.push({ start: m.index, end: m.index + m[0].length });
  return out;
};

export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

function isCardNumber(match: string): boolean {
  const digits = match.replace(/[ -]/g, '');
  if (!luhn(digits)) return false;
  return creditCardType(digits).some((type) => type.lengths.includes(digits.length));
}

const CARD = /(?<![\d-])\d(?:[ -]?\d){11,18}(?![\d])/g;
// Local part and domain bounded, and the start pinned after a non-address character, so that a long run of
// letters is not tried from every position.
const EMAIL = /(?<![A-Za-z0-9._%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}\.){1,8}[A-Za-z]{2,24}(?![A-Za-z0-9-])/g;
// Groups of four after the check digits (spaced or not), then a shorter last one: one way to cut a run, so a long
// run of letters and digits is not tried in every partition.
const IBAN = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])/g;
const IPV4 = /(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\d.]?\d)/g;
// Candidates only; node:net's isIP decides. At least two colons and a hex group, so that times (12:30) are not tried.
const IPV6 = /(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{1,4}:){1,7}:?(?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){0,6})?(?![0-9A-Fa-f:])/g;
// US SSN without the never-issued areas (000, 666, 9xx), group 00 and serial 0000.
const US_SSN = /(?<!\d)(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?!\d)/g;
// UK NINO: two prefix letters (D, F, I, Q, U, V never; O not second), six digits, suffix A-D.
const UK_NINO = /(?<![A-Za-z0-9])(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])/g;
const ES_DNI = /(?<![A-Za-z0-9])([XYZ]?)(\d{7,8})-?([A-Z])(?![A-Za-z0-9])/g;
const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';

function dniSpans(text: string): Span[] {
  const out: Span[] = [];
  for (const m of matches(ES_DNI, text)) {
    const prefix = m[1] ? String('XYZ'.indexOf(m[1])) : '';
    if (!m[1] && m[2]!.length !== 8) continue;
    if (DNI_LETTERS[Number(prefix + m[2]) % 23] === m[3]) out.push({ start: m.index, end: m.index + m[0].length });
  }
  return out;
}

function hasTwoColons(text: string): boolean {
  const first = text.indexOf(':');
  return first >= 0 && text.indexOf(':', first + 1) >= 0;
}

/** A run that could hold a phone number: seven digits or more, with the separators numbers are written with. */
const PHONE_CANDIDATE = /[+(]?\d(?:[\s().\/-]{0,3}\d){6,}/g;

function countDigits(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) n++;
  return n;
}

function phoneFinder(country: string | undefined): Finder {
  const options = country ? { defaultCountry: country as CountryCode } : undefined;
  return (text) => {
    // libphonenumber's matcher walks the text it is given: it gets only the candidate runs (and one character
    // each side, for its boundary checks), so that a long prompt costs what its digits cost.
    const out: Span[] = [];
    for (const m of matches(PHONE_CANDIDATE, text)) {
      // E.164 numbers have at most 15 digits (17 leaves room for a trunk prefix and an extension digit); a longer
      // run is a serial, an id or a timestamp, never one number.
      if (countDigits(m[0]) > 17) continue;
      const from = Math.max(0, m.index - 1);
      for (const found of findPhoneNumbersInText(text.slice(from, m.index + m[0].length + 1), options)) {
        out.push({ start: from + found.startsAt, end: from + found.endsAt });
      }
    }
    return out;
  };
}

/** The finder of each PII type, for this entry's phone country. */
export function piiFinders(phoneCountry: string | undefined): Record<PiiType, Finder> {
  return {
    secret: (text) => (SECRET_HINT.test(text) ? spansOf(SECRETS)(text) : []),
    paymentCard: spansOf(CARD, isCardNumber),
    iban: spansOf(IBAN, (match) => isValidIBAN(electronicFormatIBAN(match) ?? '')),
    nationalId: (text) => [...spansOf(US_SSN)(text), ...spansOf(UK_NINO)(text), ...dniSpans(text)],
    // Cheap prefilters: a character every match must have, found by indexOf, spares most texts the regex walk.
    email: (text) => (text.includes('@') ? spansOf(EMAIL)(text) : []),
    ipAddress: (text) => [...spansOf(IPV4)(text), ...(hasTwoColons(text) ? spansOf(IPV6, (m) => isIP(m) === 6)(text) : [])],
    phone: phoneFinder(phoneCountry),
  };
}
