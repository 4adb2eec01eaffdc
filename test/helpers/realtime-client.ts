/** A `ws` client of the gateway's realtime WebSocket that keeps every frame it gets and how it closed. */
import WebSocket from 'ws';
import { eventually } from './eventually.ts';
import { postJson } from './gateway.ts';

export interface RealtimeClient {
  socket: WebSocket;
  frames: string[];
  closed: Promise<{ code: number; reason: string }>;
  /** Resolves once `count` frames have arrived. */
  frameCount(count: number): Promise<void>;
}

export function connectRealtime(url: string, protocol?: string): Promise<RealtimeClient> {
  const socket = protocol === undefined ? new WebSocket(url) : new WebSocket(url, protocol);
  const frames: string[] = [];
  socket.on('message', (data) => frames.push(data.toString()));
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve({
      socket, frames, closed,
      frameCount: (count) => eventually(async () => {
        if (frames.length < count) throw new Error(`${frames.length} of ${count} frames`);
      }, 5000, 10),
    }));
    socket.once('error', reject);
  });
}

export interface CreatedSession {
  id: string;
  gateway_ws_url: string;
  subprotocol_hint: string;
  ticket: string;
  [field: string]: unknown;
}

export async function createSession(url: string, key: string, body: Record<string, unknown> = {}): Promise<{ status: number; body: any }> {
  return postJson(`${url}/v1/realtime/sessions`, { provider: 'openai', model: 'gpt-4o-realtime', modalities: ['text', 'audio'], ...body }, { authorization: `Bearer ${key}` });
}

export async function fetchSession(url: string, key: string, id: string): Promise<any> {
  return (await fetch(`${url}/v1/realtime/sessions/${id}`, { headers: { authorization: `Bearer ${key}` } })).json();
}

/** 1 s of pcm16 at 24 kHz mono, sent by the client. */
export const CLIENT_AUDIO = Buffer.alloc(48_000, 1).toString('base64');

/** The client's audio and a response request; the response's four events back (test/fakes/realtime.ts). */
export async function converse(client: RealtimeClient): Promise<void> {
  const before = client.frames.length;
  client.socket.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: CLIENT_AUDIO }));
  client.socket.send(JSON.stringify({ type: 'response.create', response: { modalities: ['text', 'audio'] } }));
  await client.frameCount(before + 4);
}
