/**
 * `aigw keys | tenants | orgs | departments | policies | jwt` as operators run them: real child processes,
 * once with no gateway running (the CLI opens the data folder itself) and once with a gateway holding the
 * folder (the CLI asks it, with the control token the gateway left there). Each spawn costs a second or two,
 * so the two runs go side by side on two folders, and the run against the gateway issues independent commands
 * in parallel.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { freshDataDir } from '../helpers/data-dir.ts';
import { ADMIN_TOKEN, chatConfig, postJson } from '../helpers/gateway.ts';
import { runCli, startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';

const JWT_SECRET = 'admin-cli-test-jwt-secret-0123456789-abcdef';
const REVOKED_JTI = 'some-jti';
const POLICY = { models: ['gpt-4o-mini'], modelOverrides: { 'gpt-4o': 'gpt-4o-mini' }, rateLimits: { requestsPerMinute: 10 } };

type CliResult = Awaited<ReturnType<typeof runCli>>;

function mintJwt(jti: string): Promise<string> {
  return new SignJWT({ tenantId: 'default', type: 'access' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('cli-test-user')
    .setJti(jti)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(JWT_SECRET));
}

function ok(result: CliResult, what: string): string {
  assert.equal(result.code, 0, `${what} exited ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result.stdout;
}

function json(result: CliResult, what: string): any {
  const stdout = ok(result, what);
  try {
    return JSON.parse(stdout);
  } catch {
    assert.fail(`${what} did not print JSON: ${stdout}`);
  }
}

function chat(url: string, credential: string, model = 'plain') {
  return postJson(`${url}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'hi' }] }, { authorization: `Bearer ${credential}` });
}

function assertRefused(answer: { status: number; body: any }, status: number, code: string): void {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  assert.equal(answer.body?.error?.code, code, JSON.stringify(answer.body));
}

/** Runs a step's independent commands at once, or one after the other (the embedded database takes one process). */
async function wave(parallel: boolean, steps: Array<() => Promise<CliResult>>): Promise<CliResult[]> {
  if (parallel) return Promise.all(steps.map((step) => step()));
  const results: CliResult[] = [];
  for (const step of steps) results.push(await step());
  return results;
}

/**
 * Each test runs a dozen CLI processes, each starting from source through tsx: over a minute on a loaded 2-core
 * machine, against the suite's 2-minute default.
 */
const CLI_TEST_TIMEOUT_MS = 300_000;

describe('aigw admin commands', { concurrency: 2 }, () => {
  let fake: FakeOpenAI;
  let dir: string;
  let configFile: string;
  const folders: string[] = [];
  const running: GatewayProcess[] = [];

  const dataDir = async () => {
    const path = await freshDataDir();
    folders.push(path);
    return path;
  };
  /** Without an admin token, the CLI still reaches the gateway: through the control token in the data folder. */
  const startGateway = async (data: string, adminToken = '') => {
    const gateway = await startGatewayProcess(configFile, { AIGW_DATA_DIR: data, AIGW_JWT_SECRET: JWT_SECRET, AIGW_ADMIN_TOKEN: adminToken });
    running.push(gateway);
    return gateway;
  };
  const stopGateway = async (gateway: GatewayProcess) => {
    gateway.child.kill('SIGTERM');
    assert.equal(await gateway.exited, 0);
  };

  before(async () => {
    fake = await startFakeOpenAI();
    dir = await mkdtemp(join(tmpdir(), 'aigw-admin-cli-test-'));
    configFile = join(dir, 'pipelines.yaml');
    await writeFile(configFile, chatConfig(fake.baseUrl));
  });
  after(async () => {
    for (const gateway of running) if (gateway.child.exitCode === null && gateway.child.signalCode === null) gateway.child.kill('SIGKILL');
    await Promise.all(running.map((g) => g.exited));
    await fake?.close();
    for (const path of [dir, ...folders]) if (path) await rm(path, { recursive: true, force: true });
  });

  /**
   * The same commands either way. `gateway` is the one holding the folder, if any: with it, each write is
   * checked on the data plane as soon as the command returns.
   */
  async function scenario(data: string, gateway: GatewayProcess | undefined): Promise<{ key: any; org: any }> {
    const parallel = gateway !== undefined;
    const cli = (...args: string[]) => () => runCli([...args, '--config', configFile], { AIGW_DATA_DIR: data });
    const jwt = await mintJwt(REVOKED_JTI);
    if (gateway) assert.equal((await chat(gateway.url, jwt)).status, 200);

    const [keyCreate, tenantCreate, orgCreate, jwtRevoke, showMissing, usage] = await wave(parallel, [
      cli('keys', 'create', '--name', 'cli-key', '--json'),
      cli('tenants', 'create', '--id', 'acme', '--name', 'Acme'),
      cli('orgs', 'create', '--name', 'Eng', '--json'),
      cli('jwt', 'revoke', REVOKED_JTI),
      cli('keys', 'show', 'nope'),
      cli('keys', 'frobnicate'),
    ]);
    const key = json(keyCreate!, 'keys create');
    assert.match(key.key, /^aigw_sk_/);
    assert.equal(key.status, 'active');
    const tenant = json(tenantCreate!, 'tenants create');
    assert.deepEqual([tenant.object, tenant.id, tenant.name], ['tenant', 'acme', 'Acme']);
    const org = json(orgCreate!, 'orgs create');
    assert.match(org.id, /^org_/);
    assert.deepEqual([org.name, org.tenantId], ['Eng', 'default']);
    assert.equal(ok(jwtRevoke!, 'jwt revoke'), `revoked jti ${REVOKED_JTI}\n`);
    assert.equal(showMissing!.code, 1, showMissing!.stderr);
    assert.match(showMissing!.stderr, /NOT_FOUND/);
    assert.equal(showMissing!.stdout, '');
    assert.equal(usage!.code, 2, usage!.stderr);
    assert.match(usage!.stderr, /unknown keys command "frobnicate"/);
    assert.match(usage!.stderr, /usage: aigw/);
    if (gateway) assertRefused(await chat(gateway.url, jwt), 401, 'AUTH_INVALID_TOKEN');

    const [keyList, keyShow, tenantList, orgList, deptCreate, orgKeyCreate] = await wave(parallel, [
      cli('keys', 'list'),
      cli('keys', 'show', key.id, '--json'),
      cli('tenants', 'list'),
      cli('orgs', 'list'),
      cli('departments', 'create', '--organization', org.id, '--name', 'ML', '--json'),
      // A key of the organization, to see its policy in force (free in parallel; offline it is checked later).
      ...(gateway ? [cli('keys', 'create', '--name', 'eng-key', '--organization', org.id, '--json')] : []),
    ]);
    const keyLines = ok(keyList!, 'keys list').trim().split('\n');
    const keyLine = keyLines.find((line) => line.startsWith(`${key.id}\t`));
    assert.ok(keyLine, `keys list does not show ${key.id}:\n${keyLines.join('\n')}`);
    assert.match(keyLine, /\tcli-key\tactive\tdefault\t/);
    assert.ok(!keyLines.join('\n').includes(key.key), 'keys list prints a plaintext key');
    const shown = json(keyShow!, 'keys show');
    const { key: _plaintext, ...record } = key;
    assert.deepEqual(shown, record);
    const tenantLines = ok(tenantList!, 'tenants list').trim().split('\n');
    assert.ok(tenantLines.includes('acme\tAcme'), tenantLines.join('\n'));
    assert.ok(tenantLines.some((line) => line.startsWith('default\t')), tenantLines.join('\n'));
    assert.ok(ok(orgList!, 'orgs list').split('\n').includes(`${org.id}\tEng\tdefault`), orgList!.stdout);
    const dept = json(deptCreate!, 'departments create');
    assert.deepEqual([dept.object, dept.name, dept.organizationId, dept.tenantId], ['department', 'ML', org.id, 'default']);
    const orgKey = gateway ? json(orgKeyCreate!, 'keys create --organization') : undefined;
    if (gateway) {
      assert.equal(orgKey.organizationId, org.id);
      // Both keys work, and the organization (no policy yet) is now in the gateway's cache.
      assert.equal((await chat(gateway.url, key.key)).status, 200);
      assert.equal((await chat(gateway.url, orgKey.key, 'plain')).status, 200);
    }

    const [policySet, keyRevoke] = await wave(parallel, [
      cli('policies', 'set', '--organization', org.id, '--models', 'gpt-4o-mini', '--override', 'gpt-4o=gpt-4o-mini', '--requests-per-minute', '10', '--json'),
      cli('keys', 'revoke', key.id),
    ]);
    const withPolicy = json(policySet!, 'policies set');
    assert.equal(withPolicy.id, org.id);
    assert.deepEqual(withPolicy.policy, POLICY);
    assert.equal(ok(keyRevoke!, 'keys revoke'), `revoked ${key.id}\n`);
    if (gateway) {
      // The running gateway sees both writes at once.
      assertRefused(await chat(gateway.url, key.key), 401, 'AUTH_API_KEY_REVOKED');
      assertRefused(await chat(gateway.url, orgKey.key, 'plain'), 403, 'MODEL_NOT_ALLOWED');
      assert.equal((await chat(gateway.url, orgKey.key, 'gpt-4o')).status, 200);
    }

    const orgShow = json(await cli('orgs', 'show', org.id, '--json')(), 'orgs show');
    assert.equal(orgShow.id, org.id);
    assert.deepEqual(orgShow.policy, POLICY);
    return { key, org };
  }

  test('with no gateway running, the CLI serves the admin API itself; a gateway started later sees its writes', { timeout: CLI_TEST_TIMEOUT_MS }, async () => {
    const data = await dataDir();
    const { key, org } = await scenario(data, undefined);

    // Left running if an assertion fails: after() kills it.
    const gateway = await startGateway(data, ADMIN_TOKEN);
    assertRefused(await chat(gateway.url, key.key), 401, 'AUTH_API_KEY_REVOKED');
    const created = await postJson(`${gateway.url}/admin/v1/keys`, { name: 'eng-key', organizationId: org.id }, { authorization: `Bearer ${ADMIN_TOKEN}` });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const orgKey = created.body as { key: string };
    assertRefused(await chat(gateway.url, orgKey.key, 'plain'), 403, 'MODEL_NOT_ALLOWED');
    assert.equal((await chat(gateway.url, orgKey.key, 'gpt-4o')).status, 200);
    assertRefused(await chat(gateway.url, await mintJwt(REVOKED_JTI)), 401, 'AUTH_INVALID_TOKEN');
    assert.equal((await chat(gateway.url, await mintJwt('another-jti'))).status, 200);
    await stopGateway(gateway);
  });

  test('with a gateway holding the data folder, the CLI asks it, and its writes hold at once', { timeout: CLI_TEST_TIMEOUT_MS }, async () => {
    const data = await dataDir();
    const gateway = await startGateway(data);
    await scenario(data, gateway);
    await stopGateway(gateway);
  });
});
