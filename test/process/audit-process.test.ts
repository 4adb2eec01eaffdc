/**
 * The audit plugin in a gateway process: SIGTERM in the middle of a stream leaves exactly one audit record,
 * written before the process exits, whether the stream drains to its end or the shutdown deadline cuts it; and
 * `aigw audit verify` over the data folder then finds the chain intact.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openDatabase } from '../../core/store/database.ts';
import { helloStreamEvents, sleep, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { auditConfig } from '../helpers/audit.ts';
import { freshDataDir } from '../helpers/data-dir.ts';
import { ADMIN_TOKEN, postJson } from '../helpers/gateway.ts';
import { runCli, startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';

async function recordsIn(dataDir: string, requestId: string): Promise<Array<Record<string, any>>> {
  const db = await openDatabase({ dataDir });
  try {
    const rows = await db.query<{ content: string }>('SELECT content FROM audit_records WHERE request_id = $1', [requestId]);
    return rows.map((r) => JSON.parse(r.content));
  } finally {
    await db.close();
  }
}

describe('audit records across a SIGTERM', () => {
  let fake: FakeOpenAI;
  let dir: string;
  const dataDirs: string[] = [];
  const running: GatewayProcess[] = [];

  before(async () => {
    fake = await startFakeOpenAI();
    dir = await mkdtemp(join(tmpdir(), 'aigw-audit-process-'));
  });
  after(async () => {
    for (const gateway of running) if (gateway.child.exitCode === null && gateway.child.signalCode === null) gateway.child.kill('SIGKILL');
    await Promise.all(running.map((g) => g.exited));
    await fake.close();
    for (const path of [dir, ...dataDirs]) await rm(path, { recursive: true, force: true });
  });

  for (const ending of ['drains', 'is cut by the deadline'] as const) {
    test(`a stream that ${ending} after SIGTERM has one record; the chain verifies`, async () => {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      fake.handle(async (req, res) => {
        const events = helloStreamEvents(req.body, ['one', ' two']);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(events[0]);
        await released;
        for (const event of events.slice(1)) res.write(event);
        res.end();
      });
      try {
        const configFile = join(dir, `${randomUUID()}.yaml`);
        const server = ending === 'drains' ? '' : 'server:\n  shutdownTimeoutMs: 500\n';
        await writeFile(configFile, auditConfig(fake.baseUrl, '- audit:\n    flushIntervalMs: 600000', server));
        const dataDir = await freshDataDir();
        dataDirs.push(dataDir);
        const gateway = await startGatewayProcess(configFile, { AIGW_DATA_DIR: dataDir, AIGW_ADMIN_TOKEN: ADMIN_TOKEN });
        running.push(gateway);
        const created = await postJson(`${gateway.url}/admin/v1/keys`, { name: 'audit-process' }, { authorization: `Bearer ${ADMIN_TOKEN}` });
        const requestId = randomUUID();
        const response = await fetch(`${gateway.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${created.body.key}`, 'content-type': 'application/json', 'x-request-id': requestId },
          body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
        });
        assert.equal(response.status, 200);
        const reader = response.body!.getReader();
        await reader.read();
        gateway.child.kill('SIGTERM');
        if (ending === 'drains') {
          await sleep(200);
          release();
        }
        await (async () => {
          try {
            while (!(await reader.read()).done);
          } catch {
            // cut by the deadline
          }
        })();
        assert.equal(await gateway.exited, 0);
        const records = await recordsIn(dataDir, requestId);
        assert.equal(records.length, 1, JSON.stringify(records));
        assert.equal(records[0]!.outcome, ending === 'drains' ? 'completed' : 'aborted');
        assert.equal(records[0]!.stream, true);

        const verify = await runCli(['audit', 'verify', '--config', configFile], { AIGW_DATA_DIR: dataDir, AIGW_LOG_LEVEL: 'silent' });
        assert.equal(verify.code, 0, verify.stderr);
        assert.match(verify.stdout, /audit log intact: 2 records \(seq 1 to 2\)/);
      } finally {
        release();
        fake.reset();
      }
    });
  }
});
