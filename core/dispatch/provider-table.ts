/**
 * The provider table of docs/providers.md, rendered from the registry so the documentation cannot drift from
 * what is registered: `npx aigw providers --write docs/providers.md` (or `npx aigw docs --write`, with every other
 * generated region) rewrites it through core/doc-regions.ts, and a test compares.
 */
import { regionEnd, regionStart } from '../doc-regions.ts';
import type { ModalityCapability, ProviderDefinition } from './provider.ts';

export const TABLE_START = regionStart('providers', 'npx aigw providers --write docs/providers.md');
export const TABLE_END = regionEnd('providers');

const MODALITIES = ['chat', 'completion', 'embeddings', 'rerank', 'transcription', 'translation', 'speech', 'image', 'video', 'files'] as const;

function chatCell(provider: ProviderDefinition): string {
  const chat = provider.capabilities.chat;
  if (!chat) return '';
  // `files` is shown as "file parts": the other column's `files` is the files API, a different thing.
  const flags = (['stream', 'tools', 'vision', 'n', 'files'] as const).filter((flag) => chat[flag]).map((flag) => (flag === 'files' ? 'file parts' : flag));
  const builtIns = chat.builtInTools?.length ? `; built-ins: ${chat.builtInTools.join(', ')}` : '';
  return `yes (${flags.join(', ') || 'no streaming, tools, images or n'}${builtIns})`;
}

/** Besides the modalities: a native Responses API, and batches (submitted, or only polled once registered). */
function otherModalities(provider: ProviderDefinition): string {
  const caps = provider.capabilities as Record<string, ModalityCapability | undefined>;
  const cells: string[] = MODALITIES.filter((m) => m !== 'chat' && caps[m]);
  if (provider.capabilities.responses) cells.push('responses (native)');
  const batch = provider.capabilities.batch;
  if (batch) cells.push(batch.submit === false ? 'batch (polled)' : 'batch');
  return cells.join(', ');
}

/** How many registered providers serve each modality they declare, in the modalities' order. */
export function modalityCounts(providers: readonly ProviderDefinition[]): Array<[string, number]> {
  return MODALITIES.map((m) => [m, providers.filter((p) => (p.capabilities as Record<string, unknown>)[m]).length] as [string, number])
    .filter(([, count]) => count > 0);
}

export function renderProviderTable(providers: readonly ProviderDefinition[]): string {
  const rows = [...providers].sort((a, b) => a.slug.localeCompare(b.slug)).map((p) =>
    `| \`${p.slug}\` | ${p.displayName} | ${p.family} | ${chatCell(p)} | ${otherModalities(p)} | ${p.defaultBaseUrl ? `\`${p.defaultBaseUrl}\`` : '(set baseUrl)'} |`);
  const counts = modalityCounts(providers).map(([modality, count]) => `${count} with ${modality}`).join(', ');
  return [
    TABLE_START,
    `${providers.length} providers registered: ${counts}.`,
    '',
    '| slug | name | family | chat | other modalities | default base URL |',
    '|---|---|---|---|---|---|',
    ...rows,
    TABLE_END,
  ].join('\n');
}
