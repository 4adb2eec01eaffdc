/** The response formats the gateway renders from a canonical transcription, and how nameless audio gets a name. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { TranscriptionResult } from '../../core/canonical/audio.ts';
import { audioFromBase64, namedAudio } from '../../core/ingress/audio-input.ts';
import { renderTranscript, timestamp, toSrt, toVtt } from '../../core/ingress/transcript-formats.ts';

const result = (fields: Partial<TranscriptionResult>): TranscriptionResult => ({ object: 'transcription', text: 'one two', usage: { audio_seconds: 3725.5 }, ...fields });

describe('transcript formats', () => {
  test('timestamps past an hour, rounded to the millisecond', () => {
    assert.equal(timestamp(3725.5004, ','), '01:02:05,500');
    assert.equal(timestamp(0.0015, '.'), '00:00:00.002');
    assert.equal(timestamp(-1, ','), '00:00:00,000');
  });

  test('without segments: one cue over the whole duration; an empty text has no cue', () => {
    assert.equal(toSrt(result({ duration: 3725.5 })), '1\n00:00:00,000 --> 01:02:05,500\none two\n');
    assert.equal(toVtt(result({})), 'WEBVTT\n\n00:00:00.000 --> 01:02:05.500\none two\n');
    assert.equal(toSrt(result({ text: ' ' })), '');
    assert.equal(toVtt(result({ text: '' })), 'WEBVTT\n');
  });

  test('json carries the text and the seconds; verbose_json the language, duration and segments', () => {
    assert.deepEqual(renderTranscript(result({}), 'json', 'transcribe').body, { text: 'one two', usage: { type: 'duration', seconds: 3725.5 } });
    const verbose = renderTranscript(result({ language: 'en', duration: 2, segments: [{ id: 0, start: 0, end: 2, text: 'one two' }] }), 'verbose_json', 'translate');
    assert.equal(verbose.contentType, 'application/json');
    assert.deepEqual(verbose.body, { task: 'translate', language: 'en', duration: 2, text: 'one two', segments: [{ id: 0, start: 0, end: 2, text: 'one two' }], usage: { type: 'duration', seconds: 3725.5 } });
    assert.equal(renderTranscript(result({}), 'text', 'transcribe').contentType, 'text/plain; charset=utf-8');
    assert.equal(renderTranscript(result({}), 'vtt', 'transcribe').contentType, 'text/vtt; charset=utf-8');
  });
});

describe('audio names', () => {
  const riff = Buffer.concat([Buffer.from('RIFF\0\0\0\0WAVEfmt ', 'latin1'), Buffer.alloc(32)]);
  test('a known extension is kept; otherwise the name comes from the bytes', () => {
    assert.deepEqual({ ...namedAudio(riff, 'talk.mp3', 'audio/mpeg'), bytes: undefined }, { bytes: undefined, filename: 'talk.mp3', mimeType: 'audio/mpeg' });
    assert.equal(namedAudio(riff, 'talk', undefined).filename, 'talk.wav');
    assert.equal(namedAudio(riff, undefined, 'application/octet-stream').mimeType, 'audio/wav');
    assert.equal(namedAudio(Buffer.from('OggS\0\0\0\0\0\0\0\0\0\0', 'latin1'), undefined, undefined).filename, 'audio.ogg');
    assert.equal(namedAudio(Buffer.concat([Buffer.from('ID3'), Buffer.alloc(20)]), 'x.bin', undefined).filename, 'x.mp3');
  });

  test('base64 and data: URIs; anything else is refused', () => {
    assert.equal(audioFromBase64(riff.toString('base64')).filename, 'audio.wav');
    assert.equal(audioFromBase64(`data:audio/x-wav;base64,${riff.toString('base64')}`).mimeType, 'audio/x-wav');
    assert.throws(() => audioFromBase64('not base64!'), /base64/);
    assert.throws(() => audioFromBase64(''), /base64/);
  });
});
