/**
 * GET /v1/realtime/connect: the WebSocket a client opens with the ticket of its session as the subprotocol
 * `ticket.<ticket>`. Browsers cannot set headers on a handshake, so the ticket is the credential: this upgrade is
 * served by the server's upgrade listener before the Koa app, without the auth plugin. The handshake completes
 * first (close codes exist only on an open WebSocket); then the ticket is redeemed in one KV step (single use
 * across instances) and a missing, expired or spent ticket closes the socket with 4401.
 *
 * The hub holds this instance's relays, so that a gateway shutdown closes each (1001) and records its usage
 * before the stores close.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { GatewayConfig } from '../config/types.ts';
import { passthroughTargets } from '../dispatch/passthrough.ts';
import type { ProviderRegistry } from '../dispatch/provider-registry.ts';
import type { JobQueue } from '../jobs/types.ts';
import type { Log } from '../log.ts';
import type { MeteredWork } from '../pipeline/metered.ts';
import type { Database } from '../store/database.ts';
import type { KV } from '../store/kv.ts';
import { closeRealtimeSession, findRealtimeSession, markConnected, type RealtimeSessionRecord, type RealtimeUsage } from '../store/realtime-sessions.ts';
import { redeemTicket, releaseSlot, renewSlot, takeSlot } from './kv-ops.ts';
import { Relay, type RelayEnd } from './relay.ts';

export const CONNECT_PATH = '/v1/realtime/connect';
export const TICKET_PROTOCOL = 'ticket.';
export const TICKET_REJECTED = 4401;

export interface RealtimeDeps {
  config: GatewayConfig;
  db: Database;
  kv: KV;
  providers: ProviderRegistry;
  now(): number;
  logger: Log;
  meterWork(work: MeteredWork): Promise<void>;
  /** For the `realtime.meter` job, when a session's usage could not be reported at its close. */
  jobs: JobQueue;
  /** One second of idle timeout, in ms (tests shorten it). */
  idleUnitMs: number;
}

export const REALTIME_METER = 'realtime.meter';

/** A closed session's usage as metered work: its id is the session's, so plugins take it once. */
export function realtimeWork(s: RealtimeSessionRecord, usage: RealtimeUsage, endedAt: number, reason: string): MeteredWork {
  return {
    id: s.id, source: 'realtime',
    tenantId: s.tenantId, organizationId: s.organizationId, departmentId: s.departmentId,
    callerKind: s.callerKind, apiKeyId: s.apiKeyId, userId: s.userId,
    endpoint: '/v1/realtime/sessions', modality: 'realtime', provider: s.provider,
    requestedModel: s.requestedModel, model: s.model, upstreamModel: s.upstreamModel,
    usage: { prompt_tokens: usage.input_tokens, completion_tokens: usage.output_tokens, total_tokens: usage.input_tokens + usage.output_tokens },
    audioSeconds: usage.audio_seconds,
    requests: { total: 1, completed: reason === 'upstream_error' ? 0 : 1, failed: reason === 'upstream_error' ? 1 : 0 },
    status: reason === 'upstream_error' ? 'failed' : 'completed',
    startedAt: s.connectedAt ?? s.createdAt, endedAt,
  };
}

/** Closes a socket not relayed (yet); it was paused, and must read the peer's answering close frame. */
function refuse(client: WebSocket, code: number, reason: string): void {
  if (client.readyState !== client.OPEN) return;
  client.resume();
  client.close(code, reason);
}

export class RealtimeHub {
  private readonly server: WebSocketServer;
  private readonly relays = new Set<Relay>();
  /** Sockets between the handshake and their relay (the ticket being redeemed). */
  private readonly admitting = new Set<WebSocket>();
  private closing = false;

  constructor(private readonly deps: RealtimeDeps) {
    this.server = new WebSocketServer({
      noServer: true, maxPayload: deps.config.realtime.maxFrameBytes, perMessageDeflate: false,
      // The ticket's subprotocol is echoed, as browsers require of a protocol they offered.
      handleProtocols: (protocols) => [...protocols].find((p) => p.startsWith(TICKET_PROTOCOL)) ?? false,
    });
  }

  static handles(req: IncomingMessage): boolean {
    return (req.url ?? '').split('?')[0] === CONNECT_PATH;
  }

  get size(): number {
    return this.relays.size;
  }

  /** The most bytes any session has waiting to be written to each side (back-pressure keeps it bounded). */
  buffered(): { client: number; provider: number } {
    let client = 0;
    let provider = 0;
    for (const relay of this.relays) {
      client = Math.max(client, relay.buffered('client'));
      provider = Math.max(provider, relay.buffered('provider'));
    }
    return { client, provider };
  }

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    if (this.closing) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    this.server.handleUpgrade(req, socket, head, (client) => {
      this.admitting.add(client);
      client.on('error', () => client.terminate());
      client.pause();
      void this.admit(client).finally(() => this.admitting.delete(client)).catch((err: unknown) => {
        this.deps.logger.warn({ err }, 'realtime: a connection could not be set up');
        refuse(client, 1011, 'internal error');
      });
    });
  }

  private async admit(client: WebSocket): Promise<void> {
    const reject = (why: string) => refuse(client, TICKET_REJECTED, why);
    const ticket = client.protocol.startsWith(TICKET_PROTOCOL) ? client.protocol.slice(TICKET_PROTOCOL.length) : '';
    if (!ticket) return reject('a ticket is required: subprotocol ticket.<ticket>');
    const { db, kv, config, now } = this.deps;
    const id = await kv.run(redeemTicket, { ticket });
    const session = id === null ? null : await findRealtimeSession(db, null, id);
    if (!session || session.status !== 'connecting' || session.ticketExpiresAt <= now()) return reject('invalid, expired or already-redeemed ticket');
    const hook = this.deps.providers.get(session.provider)?.realtime;
    const entry = passthroughTargets(config, this.deps.providers).get(session.provider);
    if (!hook || !entry) {
      await this.closeRecord(session, { reason: 'provider_unavailable', clientCode: 1011, providerCode: 1000 }, { input_tokens: 0, output_tokens: 0, audio_seconds: 0 });
      return refuse(client, 1011, `provider ${session.provider} is not configured`);
    }
    const lease = config.realtime.slotLeaseMs;
    // The slot was taken at creation until the ticket's expiry; from now on it lives as long as the session.
    const held = await kv.run(renewSlot, { id: session.id, now: now(), until: now() + lease })
      || await kv.run(takeSlot, { id: session.id, cap: config.realtime.maxConcurrentSessions, now: now(), until: now() + lease });
    if (!held || !(await markConnected(db, session.id, now()))) {
      if (held) await kv.run(releaseSlot, { id: session.id });
      return refuse(client, 1013, 'no realtime slot is free; create a new session');
    }
    if (this.closing) {
      await this.closeRecord(session, { reason: 'gateway_shutdown', clientCode: 1001, providerCode: 1001 }, { input_tokens: 0, output_tokens: 0, audio_seconds: 0 });
      return refuse(client, 1001, 'gateway shutting down');
    }
    const cap = config.realtime.maxConcurrentSessions;
    const renew = async () => {
      const args = { id: session.id, now: now(), until: now() + lease };
      // Lapsed (the KV was out of reach for a whole lease): taken again when the cap allows.
      if (await kv.run(renewSlot, args) || await kv.run(takeSlot, { ...args, cap })) return;
      this.deps.logger.warn({ session: session.id }, 'realtime: the session lost its slot while the KV was out of reach, and the cap is reached; it runs on over the cap');
    };
    const renewal = setInterval(() => {
      void renew().catch((err: unknown) => this.deps.logger.warn({ err, session: session.id }, 'realtime: the session slot could not be renewed'));
    }, Math.floor(lease / 3));
    renewal.unref();
    const relay: Relay = new Relay({ ...session, status: 'connected', connectedAt: now() }, client, hook, { ...entry.target, upstreamModel: session.upstreamModel }, {
      idleTimeoutMs: session.idleTimeoutSeconds * this.deps.idleUnitMs, maxBufferedBytes: config.realtime.maxBufferedBytes, maxFrameBytes: config.realtime.maxFrameBytes, connectTimeoutMs: config.realtime.upstreamConnectTimeoutMs,
      onConnected: () => {},
      onEnd: async (end, usage) => {
        clearInterval(renewal);
        try {
          await this.closeRecord(relay.session, end, usage);
        } finally {
          this.relays.delete(relay);
        }
      },
    });
    this.relays.add(relay);
    relay.start();
  }

  /** Records the end, frees the slot and reports the usage; each once, however the session ended. */
  private async closeRecord(session: RealtimeSessionRecord, end: RelayEnd, usage: RealtimeUsage): Promise<void> {
    const { db, kv, now, logger } = this.deps;
    const at = now();
    const closed = await closeRealtimeSession(db, session.id, { at, reason: end.reason, usage });
    await kv.run(releaseSlot, { id: session.id }).catch((err: unknown) => logger.warn({ err, session: session.id }, 'realtime: the slot could not be released; it lapses with its lease'));
    if (!closed) return;
    try {
      await this.deps.meterWork(realtimeWork(closed, usage, at, end.reason));
    } catch (err) {
      // A plugin's store failed: the job reports it again (plugins take a work id once) until every plugin took it.
      logger.warn({ err, session: session.id }, 'realtime: the session usage could not be metered now; the realtime.meter job reports it again');
      await this.deps.jobs.enqueue({ kind: REALTIME_METER, key: `${REALTIME_METER}:${session.id}`, payload: { id: session.id } })
        .catch((failure: unknown) => logger.error({ err: failure, session: session.id, usage }, 'realtime: the session usage could not be metered'));
    }
  }

  /** Gateway shutdown: every session ends with 1001 on both sides and is recorded before the stores close. */
  async closeAll(): Promise<void> {
    this.closing = true;
    for (const client of this.admitting) refuse(client, 1001, 'gateway shutting down');
    await Promise.all([...this.relays].map((relay) => relay.end({ reason: 'gateway_shutdown', clientCode: 1001, providerCode: 1001, message: 'gateway shutting down' })));
    this.server.close();
  }
}
