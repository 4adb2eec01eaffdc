/** The gateway as operators run it: `aigw <command>` in a child process, its log lines read as they come. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = fileURLToPath(new URL('../../bin/aigw.js', import.meta.url));

export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  /** Every pino line the process has printed so far, parsed. */
  logs: Array<Record<string, unknown>>;
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  exited: Promise<number | string>;
}

/** A minimal environment: nothing from the test runner's own environment leaks into the gateway. */
export function childEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', PORT: '0', ...extra };
}

export async function startGatewayProcess(configFile: string, env: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [BIN, 'start', '--config', configFile], { cwd: REPO_ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: Array<Record<string, unknown>> = [];
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => fail(`no "aigw is listening" line within ${timeoutMs} ms`), timeoutMs);
    function fail(reason: string) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${reason}\nstderr: ${stderr}\nlogs: ${JSON.stringify(logs)}`));
    }
    let pending = '';
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        if (!line.trim()) continue;
        const entry = JSON.parse(line) as Record<string, unknown>;
        logs.push(entry);
        if (entry.msg === 'aigw is listening') {
          clearTimeout(timer);
          resolve(String(entry.url));
        }
      }
    });
    void exited.then((code) => fail(`the gateway exited (${code}) before it listened`));
  });
  return { child, url, logs, exited };
}

/** Runs an `aigw` command to completion. */
export function runCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO_ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`aigw ${args.join(' ')} did not finish within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
