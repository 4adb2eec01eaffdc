/** The registry against the documents that describe it: docs/providers.md and the catalogue of PROVIDERS.md. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { renderProviderTable, TABLE_END, TABLE_START } from '../../core/dispatch/provider-table.ts';
import { builtInProviders } from '../../providers/index.ts';
import { catalogueRows } from '../helpers/catalogue.ts';
import { REPO_ROOT } from '../helpers/process.ts';

describe('the provider registry', () => {
  test('docs/providers.md holds exactly the table the registry renders (regenerate: npx aigw providers --write docs/providers.md)', () => {
    const document = readFileSync(`${REPO_ROOT}docs/providers.md`, 'utf8');
    const start = document.indexOf(TABLE_START);
    const end = document.indexOf(TABLE_END);
    assert.ok(start !== -1 && end > start, 'the generated block is marked');
    assert.equal(document.slice(start, end + TABLE_END.length), renderProviderTable(builtInProviders));
  });

  test('every chat-capable provider of the catalogue is registered with chat, and no other', () => {
    const chatSlugs = catalogueRows().filter((row) => row.modalities.includes('c')).map((row) => row.slug).sort();
    const registered = builtInProviders.filter((p) => p.capabilities.chat && p.chat).map((p) => p.slug).sort();
    console.log(`registered chat providers: ${registered.length}; chat rows in PROVIDERS.md: ${chatSlugs.length}`);
    assert.deepEqual(registered, chatSlugs);
  });

  test('embeddings and rerank: the registry\'s provider x modality pairs against PROVIDERS.md\'s e and r columns', () => {
    const rows = catalogueRows();
    for (const [letter, modality] of [['e', 'embeddings'], ['r', 'rerank']] as const) {
      const marked = rows.filter((row) => row.modalities.includes(letter)).map((row) => row.slug).sort();
      const declared = builtInProviders.filter((p) => p.capabilities[modality] && p[modality]).map((p) => p.slug).sort();
      console.log(`${modality}: ${declared.length} provider x ${modality} pairs registered; ${marked.length} marked ${letter} in PROVIDERS.md`);
      assert.deepEqual(declared, marked, `the providers declaring ${modality} are exactly those PROVIDERS.md marks ${letter}`);
    }
  });

  test('audio, speech, images and video: the registry\'s provider x modality pairs are exactly PROVIDERS.md\'s s, x, p, i and v columns', () => {
    const rows = catalogueRows();
    const modalities = [
      ['s', 'transcription', 'transcription'], ['x', 'translation', 'transcription'], ['p', 'speech', 'speech'], ['i', 'image', 'image'], ['v', 'video', 'video'],
    ] as const;
    for (const [letter, modality, translator] of modalities) {
      const marked = rows.filter((row) => row.modalities.includes(letter)).map((row) => row.slug).sort();
      const declared = builtInProviders.filter((p) => p.capabilities[modality] && p[translator]).map((p) => p.slug).sort();
      console.log(`${modality}: ${declared.length} provider x ${modality} pairs registered; ${marked.length} marked ${letter} in PROVIDERS.md`);
      assert.deepEqual(declared, marked, `the providers declaring ${modality} are exactly those PROVIDERS.md marks ${letter}`);
    }
  });
});
