/**
 * The embedded database is single-process: one file in the data folder says who holds it. A gateway adds
 * its address and a control token, so that CLI commands can ask the running gateway instead of opening the
 * files themselves. A holder killed with -9 leaves the file behind; a dead pid is taken over.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface LockInfo {
  pid: number;
  /** Loopback URL of the running gateway, once it listens. */
  url?: string;
  /** Admin bearer accepted by that gateway for local CLI calls; the file is readable by its owner only. */
  controlToken?: string;
}

const FILE = 'aigw.lock';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function readLock(dataDir: string): Promise<LockInfo | null> {
  try {
    const info = JSON.parse(await readFile(join(dataDir, FILE), 'utf8')) as LockInfo;
    return info.pid !== process.pid && alive(info.pid) ? info : null;
  } catch {
    return null;
  }
}

export class DataDirLock {
  readonly controlToken = randomBytes(32).toString('base64url');
  private constructor(private readonly dataDir: string) {}

  static async acquire(dataDir: string): Promise<DataDirLock> {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const lock = new DataDirLock(dataDir);
    for (let attempt = 0; ; attempt++) {
      try {
        // 'wx' creates the file only if it is absent, so two processes racing cannot both take it.
        await writeFile(join(dataDir, FILE), JSON.stringify({ pid: process.pid }), { mode: 0o600, flag: 'wx' });
        return lock;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
      }
      const holder = await readLock(dataDir);
      if (holder) {
        throw new Error(`the data folder ${dataDir} is in use by process ${holder.pid}; the embedded database allows one process (use DATABASE_URL to run several)`);
      }
      await rm(join(dataDir, FILE), { force: true });
    }
  }

  async advertise(url: string): Promise<void> {
    await this.write({ pid: process.pid, url, controlToken: this.controlToken });
  }

  async release(): Promise<void> {
    await rm(join(this.dataDir, FILE), { force: true });
  }

  private async write(info: LockInfo): Promise<void> {
    await writeFile(join(this.dataDir, FILE), JSON.stringify(info), { mode: 0o600 });
  }
}
