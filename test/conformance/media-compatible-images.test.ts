/**
 * The media fixtures on the OpenAI-compatible hosts without transcription: the image hosts (OpenAI-shaped or with
 * their own image APIs), one gateway each.
 */
import assert from 'node:assert/strict';
import { compatibleMediaTarget, MEDIA_SLUGS } from './media-compatible-targets.ts';
import { runMediaConformance } from './media.ts';

assert.ok(MEDIA_SLUGS.other.length >= 6, 'the catalogue declares images on hosts without audio');
for (const slug of MEDIA_SLUGS.other) runMediaConformance(compatibleMediaTarget(slug));
