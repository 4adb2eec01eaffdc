/** The data-folder lock: one process per embedded database; a dead holder's file is taken over. */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, beforeEach, describe, test } from 'node:test';
import { DataDirLock, readLock } from '../../core/store/data-dir-lock.ts';

const LOCK = 'aigw.lock';

/** A live process that is not this one. */
async function startIdleChild(): Promise<ChildProcess & { pid: number }> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(()=>{},10000)'], { stdio: 'ignore' });
  await once(child, 'spawn');
  assert.ok(child.pid, 'the child has a pid');
  children.push(child);
  return child as ChildProcess & { pid: number };
}

/** Kills with SIGKILL and waits until the child is reaped (a zombie would still answer kill(pid, 0)). */
async function killChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

const children: ChildProcess[] = [];
after(async () => {
  for (const child of children) await killChild(child);
});

describe('DataDirLock', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aigw-test-lock-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const lockFile = () => join(dir, LOCK);
  const readJson = async () => JSON.parse(await readFile(lockFile(), 'utf8')) as Record<string, unknown>;

  test('acquire on an empty folder writes aigw.lock with this pid, readable by its owner only', async () => {
    const lock = await DataDirLock.acquire(dir);
    assert.deepEqual(await readJson(), { pid: process.pid });
    assert.equal((await stat(lockFile())).mode & 0o777, 0o600);
    await lock.release();
  });

  test('acquire creates a missing data folder', async () => {
    const nested = join(dir, 'a', 'b');
    const lock = await DataDirLock.acquire(nested);
    assert.deepEqual(JSON.parse(await readFile(join(nested, LOCK), 'utf8')), { pid: process.pid });
    await lock.release();
  });

  test('a lock naming another live process makes acquire reject; once it is dead the stale lock is taken over', async () => {
    const child = await startIdleChild();
    await writeFile(lockFile(), JSON.stringify({ pid: child.pid }));
    await assert.rejects(DataDirLock.acquire(dir), (err: Error) => {
      assert.match(err.message, /in use by process/);
      assert.ok(err.message.includes(String(child.pid)), err.message);
      return true;
    });
    assert.deepEqual(await readJson(), { pid: child.pid }, 'the holder keeps its file');

    await killChild(child);
    const lock = await DataDirLock.acquire(dir);
    assert.deepEqual(await readJson(), { pid: process.pid });
    await lock.release();
  });

  test('an unreadable lock file is taken over', async () => {
    await writeFile(lockFile(), '{"pid": 12');
    const lock = await DataDirLock.acquire(dir);
    assert.deepEqual(await readJson(), { pid: process.pid });
    await lock.release();
  });

  test('advertise writes the url and the control token, keeping the pid', async () => {
    const lock = await DataDirLock.acquire(dir);
    assert.match(lock.controlToken, /^[A-Za-z0-9_-]{43}$/);
    await lock.advertise('http://127.0.0.1:4321');
    assert.deepEqual(await readJson(), { pid: process.pid, url: 'http://127.0.0.1:4321', controlToken: lock.controlToken });
    assert.equal((await stat(lockFile())).mode & 0o777, 0o600, 'the token stays readable by its owner only');
    // Seen from this process the lock is its own: readLock ignores it.
    assert.equal(await readLock(dir), null);
    await lock.release();
  });

  test('readLock returns the holder only while its pid is alive and is not the calling process', async () => {
    assert.equal(await readLock(dir), null, 'no file');
    const child = await startIdleChild();
    const info = { pid: child.pid, url: 'http://127.0.0.1:5555', controlToken: 'token-of-the-other-process' };
    await writeFile(lockFile(), JSON.stringify(info), { mode: 0o600 });
    assert.deepEqual(await readLock(dir), info);

    await killChild(child);
    assert.equal(await readLock(dir), null, 'a dead holder is no holder');

    await writeFile(lockFile(), JSON.stringify({ ...info, pid: process.pid }));
    assert.equal(await readLock(dir), null, 'the calling process is not another holder');
  });

  test('release removes the file, and a second release is harmless', async () => {
    const lock = await DataDirLock.acquire(dir);
    await lock.release();
    await assert.rejects(stat(lockFile()), { code: 'ENOENT' });
    await lock.release();
    const again = await DataDirLock.acquire(dir);
    await again.release();
  });
});
