/**
 * `node --import tsx bench/guards-scan.ts [iterations]`: what the guards plugin costs per request in-process, without
 * a network: the input check of a typical 2 KB chat prompt (three messages of prose, no finding) with the
 * plugin's defaults, the same prompt with an e-mail and a phone number to redact (its three views rewritten), and
 * what they add before a stream's first token (the input check, and the first chunk through the window), and the
 * stream window over a 40-chunk answer. Each case runs in rounds after a warm-up; per-call times are
 * reported as mean, p50 and p99 in microseconds.
 */
import type { CanonicalChatRequest, ChatCompletionChunk } from '../core/canonical/chat.ts';
import type { GatewayState } from '../core/pipeline/context.ts';
import { silentLogger } from '../core/logger.ts';
import { createAjv } from '../core/validation.ts';
import { configSchema, settingsFor, type GuardsConfig } from '../plugins/guards/config.ts';
import { injectionScorer } from '../plugins/guards/injection.ts';
import { guardInput } from '../plugins/guards/input.ts';
import { outputPlan, type EntryGuards } from '../plugins/guards/plan.ts';
import { Scanner } from '../plugins/guards/scan.ts';
import { streamStage } from '../plugins/guards/stream.ts';
import { RequestGuards } from '../plugins/guards/verdicts.ts';
import { percentile } from './load.ts';

const PROSE = 'The quarterly report shows revenue growth of 12 percent across the northern region, driven by new contracts in logistics and a steady renewal rate among existing customers. Operating costs rose slightly because of hiring in the support team, while marketing spend stayed flat. ';

function prompt(extra = ''): CanonicalChatRequest {
  const user = PROSE.repeat(8).slice(0, 1880) + extra;
  return {
    modality: 'chat', model: 'bench', stream: false, includeUsage: false,
    body: {
      model: 'bench',
      messages: [
        { role: 'system', content: 'You are a careful analyst. Answer in short paragraphs and cite the figures you use.' },
        { role: 'user', content: user },
        { role: 'assistant', content: 'Understood. What would you like to know about the report?' },
        { role: 'user', content: 'Summarize the main drivers of growth and the risks for next quarter.' },
      ],
    },
  };
}

const config = (() => {
  const value: Record<string, unknown> = {};
  const validate = createAjv({ useDefaults: true }).compile(configSchema);
  if (!validate(value)) throw new Error(JSON.stringify(validate.errors));
  return value as unknown as GuardsConfig;
})();
const entry: EntryGuards = { config, scanner: new Scanner(config), injection: injectionScorer(config.injection.patterns), detectors: [], logger: silentLogger() };
const settings = settingsFor(config, undefined);
const signal = new AbortController().signal;
const state = () => ({}) as GatewayState;

/** Per-call times in µs, after a warm-up. */
async function sample(iterations: number, run: () => Promise<void> | void): Promise<number[]> {
  for (let i = 0; i < Math.min(500, iterations); i++) await run();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    await run();
    samples.push((performance.now() - t0) * 1000);
  }
  return samples;
}

async function time(name: string, iterations: number, run: () => Promise<void> | void): Promise<void> {
  const samples = await sample(iterations, run);
  const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
  console.log(`${name.padEnd(72)} mean ${mean.toFixed(1).padStart(7)} µs   p50 ${percentile(samples, 50).toFixed(1).padStart(7)} µs   p99 ${percentile(samples, 99).toFixed(1).padStart(7)} µs`);
}

const first: ChatCompletionChunk = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello there, ' }, finish_reason: null }] };

/** What the guards add before a stream's first token, at the defaults: the input check, then the first chunk through the window. */
async function beforeFirstToken(): Promise<void> {
  const guards = new RequestGuards(state(), false);
  await guardInput(entry, settings, guards, prompt(), signal, 'r');
  streamStage(outputPlan(entry, settings, guards, signal, 'r')).chunk!(first);
}

/** For `npm run bench`: the added time before the first token, in ms, over `iterations` streams. */
export async function guardsFirstTokenMs(iterations: number): Promise<number[]> {
  return (await sample(iterations, beforeFirstToken)).map((us) => us / 1000);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const iterations = Number(process.argv[2] ?? 5000);
  const plain = prompt();
  const size = plain.body.messages.reduce((n, m) => n + String(m.content).length, 0);
  console.log(`guards, defaults (cards and secrets block, e-mails and phones redact, injection blocks at 0.5); prompt of ${size} characters`);
  await time('input check, 2 KB prompt, no finding', iterations, () => guardInput(entry, settings, new RequestGuards(state(), false), prompt(), signal, 'r'));
  await time('input check, 2 KB prompt, an e-mail and a phone redacted', iterations, () => guardInput(entry, settings, new RequestGuards(state(), false), prompt(' Reach me at ann@example.com or +1 415 555 2671.'), signal, 'r'));

  const chunks: ChatCompletionChunk[] = (PROSE + PROSE).split(/(?<= )/).slice(0, 40).map((content) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] }));
  await time('what the guards add before the first token (input check + first chunk)', iterations, beforeFirstToken);
  await time('stream window, 40 chunks (per stream)', Math.ceil(iterations / 5), () => {
    const stage = streamStage(outputPlan(entry, settings, new RequestGuards(state(), false), signal, 'r'));
    for (const c of chunks) stage.chunk!(c);
    stage.end!();
  });
}
