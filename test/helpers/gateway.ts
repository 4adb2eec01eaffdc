/** In-process gateways for tests: a config text, a fresh data folder, a listening server, and helpers. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseConfig } from './config.ts';
import { createGateway, type Gateway, type GatewayOptions } from '../../core/gateway.ts';
import { silentLogger } from '../../core/logger.ts';
import { freshDataDir } from './data-dir.ts';

export const ADMIN_TOKEN = 'test-admin-token';

export interface TestGateway {
  url: string;
  gateway: Gateway;
  dataDir: string;
  configDir: string;
  /** Creates a key through the admin API and returns its plaintext. */
  createKey(fields?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export interface TestGatewayOptions extends GatewayOptions {
  env?: NodeJS.ProcessEnv;
  /** Extra files (plugins, their migrations) written beside the config; a name may include folders. */
  files?: Record<string, string>;
}

export async function startTestGateway(yaml: string, options: TestGatewayOptions = {}): Promise<TestGateway> {
  const configDir = await mkdtemp(join(tmpdir(), 'aigw-test-config-'));
  for (const [name, text] of Object.entries(options.files ?? {})) {
    await mkdir(dirname(join(configDir, name)), { recursive: true });
    await writeFile(join(configDir, name), text);
  }
  const dataDir = await freshDataDir();
  const file = join(configDir, 'pipelines.yaml');
  await writeFile(file, yaml);
  const removeFolders = async () => {
    await rm(dataDir, { recursive: true, force: true });
    await rm(configDir, { recursive: true, force: true });
  };
  let gateway: Gateway | undefined;
  let url: string;
  try {
    const loaded = await parseConfig(yaml, {
      file,
      env: { AIGW_DATA_DIR: dataDir, AIGW_ADMIN_TOKEN: ADMIN_TOKEN, ...(options.env ?? {}) },
    });
    gateway = await createGateway(loaded, { logger: silentLogger(), ...options });
    url = await gateway.listen(0);
  } catch (err) {
    // A gateway that failed to boot has released its stores itself; one that failed to listen has not.
    await gateway?.close();
    await removeFolders();
    throw err;
  }
  const started = gateway;
  return {
    url,
    gateway: started,
    dataDir,
    configDir,
    async createKey(fields = {}) {
      const response = await fetch(`${url}/admin/v1/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'test', ...fields }),
      });
      const body = (await response.json()) as { key?: string };
      if (response.status !== 201 || !body.key) throw new Error(`key creation failed: ${response.status} ${JSON.stringify(body)}`);
      return body.key;
    },
    async close() {
      await started.close();
      await removeFolders();
    },
  };
}

/** The usual config: one openai provider pointing at a fake, a couple of models, a chat pipeline. */
export function chatConfig(baseUrl: string, extra = ''): string {
  return `
providers:
  openai:
    baseUrl: ${baseUrl}
    apiKey: sk-upstream-secret
models:
  - id: gpt-4o-mini
    provider: openai
    upstreamModel: gpt-4o-mini-2024-07-18
  - id: plain
    provider: openai
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [auth]
${extra}`;
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed };
}
