/** How audio fetched from a file_url is named: the URL path's extension, else the Content-Type, else the bytes. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { audioFromUrl } from '../../core/ingress/audio-input.ts';

const riff = Buffer.concat([Buffer.from('RIFF\0\0\0\0WAVEfmt ', 'latin1'), Buffer.alloc(32)]);
const unknown = Buffer.alloc(64, 0x41);

test('the last path segment names it when its extension is a known one', () => {
  const audio = audioFromUrl(unknown, 'https://cdn.example/a/b/Meeting%2001.mp3?sig=x', 'audio/mpeg');
  assert.equal(audio.filename, 'Meeting_01.mp3', 'only plain characters reach the multipart headers');
  assert.equal(audio.mimeType, 'audio/mpeg');
});

test('without a known extension, the Content-Type names it (its parameters dropped)', () => {
  assert.equal(audioFromUrl(unknown, 'https://cdn.example/download?id=7', 'audio/x-m4a; codecs=aac').filename, 'download.m4a');
  assert.equal(audioFromUrl(unknown, 'https://cdn.example/', 'audio/ogg').filename, 'audio.ogg');
  assert.equal(audioFromUrl(unknown, 'https://cdn.example/', 'audio/ogg').mimeType, 'audio/ogg');
});

test('else the bytes name it; a type that is not a media type is ignored', () => {
  const sniffed = audioFromUrl(riff, 'https://cdn.example/blob', 'application/octet-stream');
  assert.equal(sniffed.filename, 'blob.wav');
  assert.equal(sniffed.mimeType, 'audio/wav');
  const odd = audioFromUrl(riff, 'https://cdn.example/x%ZZ', 'audio/wav\r\nx-injected: 1');
  assert.equal(odd.filename, 'audio.wav');
  assert.equal(odd.mimeType, 'audio/wav');
});
