/**
 * The media fixtures on the OpenAI-compatible hosts with transcription (and their speech and images, where
 * declared): one gateway each. The hosts with speech or images only are in media-compatible-images.test.ts.
 */
import assert from 'node:assert/strict';
import { compatibleMediaTarget, MEDIA_SLUGS } from './media-compatible-targets.ts';
import { runMediaConformance } from './media.ts';

assert.ok(MEDIA_SLUGS.audio.length >= 8, 'the catalogue declares audio on its whisper hosts');
for (const slug of MEDIA_SLUGS.audio) runMediaConformance(compatibleMediaTarget(slug));
