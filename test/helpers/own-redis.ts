/**
 * A private redis-server for tests that stop, freeze or flood the KV: its own free port and its own temp folder,
 * no persistence, stopped (and its folder removed) at the end. The shared Redis on 6379 is never touched.
 *
 *   const redis = await startOwnRedis();   // redis.url -> storage.redisUrl / REDIS_URL
 *   await redis.freeze(); ... redis.thaw(); // SIGSTOP / SIGCONT: the socket stays open, nothing answers
 *   await redis.kill();                    // SIGKILL: connections refused from then on
 *   await redis.start();                   // again, on the same port (empty: nothing was saved)
 *   await redis.stop();                    // at the end; safe after kill and twice
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';

export interface OwnRedis {
  url: string;
  port: number;
  /** The running server's pid (undefined while stopped). */
  readonly pid: number | undefined;
  /** SIGSTOP, resolved once the process is stopped (a signal is delivered asynchronously). */
  freeze(): Promise<void>;
  thaw(): void;
  /** SIGKILL, resolved once the process has exited. */
  kill(): Promise<void>;
  /** Starts it again on the same port after kill(). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Whether a redis-server binary is on PATH: tests skip with a printed reason without one. */
export async function hasRedisServer(): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn('redis-server', ['--version'], { stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
  });
}

/** Resolves once the port accepts a connection and the server has answered PING. */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    socket.setTimeout(1000, () => socket.destroy());
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) {
        socket.end();
        resolve(reply.startsWith('+PONG'));
      }
    });
    socket.once('close', () => resolve(false));
    socket.once('error', () => resolve(false));
  });
}

/** Linux: the state letter of /proc/<pid>/stat ('T' once stopped); null where there is no /proc. */
async function processState(pid: number): Promise<string | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  return stat === null ? null : (stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? null);
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export async function startOwnRedis(timeoutMs = 10_000): Promise<OwnRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'aigw-own-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let output = '';

  const launch = async () => {
    output = '';
    const started = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    started.stdout!.setEncoding('utf8').on('data', (text: string) => (output += text));
    started.stderr!.setEncoding('utf8').on('data', (text: string) => (output += text));
    const deadline = Date.now() + timeoutMs;
    // redis-server prints "Ready to accept connections" when it listens; PING confirms it from outside.
    await new Promise<void>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`redis-server exited (${code}) while starting:\n${output}`));
      started.once('exit', onExit);
      started.stdout!.on('data', () => {
        if (!output.includes('Ready to accept connections')) return;
        started.off('exit', onExit);
        resolve();
      });
      setTimeout(() => reject(new Error(`redis-server did not start within ${timeoutMs} ms:\n${output}`)), Math.max(0, deadline - Date.now())).unref();
    });
    if (!(await answersPing(port))) throw new Error(`redis-server on port ${port} does not answer PING:\n${output}`);
  };

  const kill = async () => {
    const running = child;
    if (!running) return;
    child = undefined;
    // SIGKILL ends a stopped process too, without letting it run (and answer what it holds) first.
    running.kill('SIGKILL');
    await exited(running);
  };

  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return child?.pid;
    },
    async freeze() {
      const pid = child?.pid;
      if (!pid) throw new Error('redis-server is not running');
      process.kill(pid, 'SIGSTOP');
      // A command sent before the stop has taken effect would still be answered: wait until it has.
      const deadline = Date.now() + timeoutMs;
      for (let state = await processState(pid); state !== null && state !== 'T' && state !== 't'; state = await processState(pid)) {
        if (Date.now() > deadline) throw new Error(`redis-server ${pid} did not stop (state ${state})`);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    },
    thaw() {
      if (!child?.pid) throw new Error('redis-server is not running');
      process.kill(child.pid, 'SIGCONT');
    },
    kill,
    async start() {
      if (child) throw new Error('redis-server is already running');
      await launch();
    },
    async stop() {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
