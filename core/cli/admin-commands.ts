/**
 * aigw keys | tenants | orgs | departments | policies | jwt | budgets: admin work from the command line, through the
 * admin API (see admin-client.ts). `--json` prints the API's answer as is.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../boot/load.ts';
import { builtIns } from './builtins.ts';
import { withAdminApi, type AdminCall } from './admin-client.ts';

export class UsageError extends Error {}

export const ADMIN_USAGE = `  keys create --name NAME [--capabilities chat,embeddings] [--tenant ID] [--organization ID]
              [--department ID] [--expires-at ISO] [--allowed-ips IP,CIDR]
                                   create an API key and print it (shown once)
  keys list [--tenant ID]          list API keys
  keys show ID | keys revoke ID    show or revoke one key
  keys update ID [--name NAME] [--capabilities chat,embeddings] [--allowed-ips IP,CIDR | --no-ip-limit]
              [--requests-per-minute N] [--requests-per-day N] [--tokens-per-day N] [--no-rate-limits]
              [--expires-at ISO | --no-expiry]
                                   change a key; rate limits given replace the key's limits as a whole
  tenants create --id ID --name NAME | tenants list
  orgs create --name NAME [--tenant ID] | orgs list [--tenant ID] | orgs show ID
  departments create --organization ID --name NAME | departments list [--organization ID] | departments show ID
  policies set (--organization ID | --department ID) [--models a,b] [--override FROM=TO ...]
               [--requests-per-minute N] [--requests-per-day N] [--tokens-per-day N]
                                   replace a policy (it narrows, never widens, deployment settings)
  jwt revoke JTI [--expires-at ISO]
                                   refuse every JWT with this id from now on
  budgets create --scope deployment|organization|department|key [--scope-id ID] --period daily|monthly|total
                 --limit-usd USD [--tenant ID]
                                   create a budget (scope-id: the organization, department or key id)
  budgets list [--tenant ID] [--scope S] [--scope-id ID] | budgets show ID | budgets delete ID
  budgets set ID --limit-usd USD   change a budget's limit
  every admin command takes [--config FILE] [--json]; list commands take [--limit N] [--cursor C]
`;

const common = {
  config: { type: 'string', short: 'c' },
  json: { type: 'boolean', default: false },
} as const;
const paging = { limit: { type: 'string' }, cursor: { type: 'string' } } as const;

type Values = Record<string, string | boolean | string[] | undefined>;

const list = (value: unknown) => (typeof value === 'string' ? value.split(',').map((s) => s.trim()).filter(Boolean) : undefined);

function defined(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}

function query(values: Values, names: Record<string, string>): string {
  const params = new URLSearchParams();
  for (const [option, param] of Object.entries(names)) {
    const value = values[option];
    if (typeof value === 'string') params.set(param, value);
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

function integer(value: unknown, option: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d+$/.test(value)) throw new UsageError(`--${option} takes a positive integer`);
  return Number(value);
}

function dollars(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d+(\.\d+)?$/.test(value)) throw new UsageError('--limit-usd takes an amount in USD, such as 25 or 0.50');
  return Number(value);
}

function overrides(values: unknown): Record<string, string> | undefined {
  if (!Array.isArray(values) || values.length === 0) return undefined;
  return Object.fromEntries(values.map((pair: string) => {
    const [from, to, ...rest] = pair.split('=');
    if (!from || !to || rest.length > 0) throw new UsageError(`--override takes FROM=TO (got "${pair}")`);
    return [from, to];
  }));
}

const rateLimitOptions = {
  'requests-per-minute': { type: 'string' }, 'requests-per-day': { type: 'string' }, 'tokens-per-day': { type: 'string' },
} as const;

/** The rate limits the options give, or undefined when they give none. */
function rateLimits(v: Values): Record<string, unknown> | undefined {
  const limits = defined({
    requestsPerMinute: integer(v['requests-per-minute'], 'requests-per-minute'),
    requestsPerDay: integer(v['requests-per-day'], 'requests-per-day'),
    tokensPerDay: integer(v['tokens-per-day'], 'tokens-per-day'),
  });
  return Object.keys(limits).length > 0 ? limits : undefined;
}

interface Command {
  options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean; default?: boolean }>;
  /** Positional arguments the command needs, by name. */
  positionals?: string[];
  run(admin: AdminCall, values: Values, args: string[]): Promise<unknown>;
  /** Human output; without it the answer is printed as JSON. */
  print?(answer: unknown): string;
}

interface ListAnswer { data: Array<Record<string, unknown>>; has_more: boolean; next_cursor: string | null }

const listLines = (columns: string[]) => (answer: unknown): string => {
  const { data, has_more: more, next_cursor: cursor } = answer as ListAnswer;
  const lines = data.map((item) => columns.map((c) => String(item[c] ?? '-')).join('\t'));
  if (more) lines.push(`(more: --cursor ${cursor})`);
  return lines.length > 0 ? lines.join('\n') : '(none)';
};

const COMMANDS: Record<string, Record<string, Command>> = {
  keys: {
    create: {
      options: {
        name: { type: 'string' }, capabilities: { type: 'string' }, tenant: { type: 'string' }, organization: { type: 'string' },
        department: { type: 'string' }, 'expires-at': { type: 'string' }, 'allowed-ips': { type: 'string' },
      },
      run: (admin, v) => {
        if (typeof v.name !== 'string') throw new UsageError('keys create needs --name');
        return admin('POST', '/keys', defined({
          name: v.name, tenantId: v.tenant, organizationId: v.organization, departmentId: v.department,
          scopes: v.capabilities === undefined ? undefined : { capabilities: list(v.capabilities) },
          expiresAt: v['expires-at'], allowedIps: list(v['allowed-ips']),
        }));
      },
      print: (answer) => {
        const key = answer as { key: string; id: string; scopes: { capabilities: string[] } };
        return `${key.key}\n\nkey id ${key.id}, capabilities ${key.scopes.capabilities.join(',')}; the key is shown once: store it now.`;
      },
    },
    list: {
      options: { tenant: { type: 'string' }, ...paging },
      run: (admin, v) => admin('GET', `/keys${query(v, { tenant: 'tenantId', limit: 'limit', cursor: 'cursor' })}`),
      print: listLines(['id', 'name', 'status', 'tenantId', 'prefix', 'lastUsedAt']),
    },
    show: { options: {}, positionals: ['ID'], run: (admin, _v, [id]) => admin('GET', `/keys/${encodeURIComponent(id!)}`) },
    update: {
      options: {
        name: { type: 'string' }, capabilities: { type: 'string' }, 'allowed-ips': { type: 'string' }, 'no-ip-limit': { type: 'boolean' },
        ...rateLimitOptions, 'no-rate-limits': { type: 'boolean' }, 'expires-at': { type: 'string' }, 'no-expiry': { type: 'boolean' },
      },
      positionals: ['ID'],
      run: (admin, v, [id]) => {
        const limits = rateLimits(v);
        if (limits && v['no-rate-limits']) throw new UsageError('--no-rate-limits goes without the rate-limit options');
        if (v['expires-at'] !== undefined && v['no-expiry']) throw new UsageError('--expires-at and --no-expiry exclude each other');
        if (v['allowed-ips'] !== undefined && v['no-ip-limit']) throw new UsageError('--allowed-ips and --no-ip-limit exclude each other');
        const body = defined({
          name: v.name,
          scopes: v.capabilities === undefined ? undefined : { capabilities: list(v.capabilities) },
          allowedIps: v['no-ip-limit'] ? [] : list(v['allowed-ips']),
          rateLimits: v['no-rate-limits'] ? null : limits,
          expiresAt: v['no-expiry'] ? null : v['expires-at'],
        });
        if (Object.keys(body).length === 0) throw new UsageError('keys update needs at least one field to change');
        return admin('PATCH', `/keys/${encodeURIComponent(id!)}`, body);
      },
      print: (answer) => {
        const key = answer as { id: string; rateLimits: unknown; allowedIps: string[]; scopes: { capabilities: string[] }; expiresAt: string | null };
        return [`updated ${key.id}`, `capabilities ${key.scopes.capabilities.join(',')}`,
          `rate limits ${key.rateLimits ? JSON.stringify(key.rateLimits) : 'none'}`,
          `allowed addresses ${key.allowedIps.length > 0 ? key.allowedIps.join(',') : 'any'}`, `expires ${key.expiresAt ?? 'never'}`].join('\n');
      },
    },
    revoke: {
      options: {}, positionals: ['ID'],
      run: (admin, _v, [id]) => admin('POST', `/keys/${encodeURIComponent(id!)}/revoke`),
      print: (answer) => `revoked ${(answer as { id: string }).id}`,
    },
  },
  tenants: {
    create: {
      options: { id: { type: 'string' }, name: { type: 'string' } },
      run: (admin, v) => admin('POST', '/tenants', defined({ id: v.id, name: v.name })),
    },
    list: { options: { ...paging }, run: (admin, v) => admin('GET', `/tenants${query(v, { limit: 'limit', cursor: 'cursor' })}`), print: listLines(['id', 'name']) },
  },
  orgs: {
    create: {
      options: { name: { type: 'string' }, tenant: { type: 'string' } },
      run: (admin, v) => admin('POST', '/organizations', defined({ name: v.name, tenantId: v.tenant })),
    },
    list: {
      options: { tenant: { type: 'string' }, ...paging },
      run: (admin, v) => admin('GET', `/organizations${query(v, { tenant: 'tenantId', limit: 'limit', cursor: 'cursor' })}`),
      print: listLines(['id', 'name', 'tenantId']),
    },
    show: { options: {}, positionals: ['ID'], run: (admin, _v, [id]) => admin('GET', `/organizations/${encodeURIComponent(id!)}`) },
  },
  departments: {
    create: {
      options: { name: { type: 'string' }, organization: { type: 'string' } },
      run: (admin, v) => admin('POST', '/departments', defined({ name: v.name, organizationId: v.organization })),
    },
    list: {
      options: { organization: { type: 'string' }, ...paging },
      run: (admin, v) => admin('GET', `/departments${query(v, { organization: 'organizationId', limit: 'limit', cursor: 'cursor' })}`),
      print: listLines(['id', 'name', 'organizationId']),
    },
    show: { options: {}, positionals: ['ID'], run: (admin, _v, [id]) => admin('GET', `/departments/${encodeURIComponent(id!)}`) },
  },
  policies: {
    set: {
      options: {
        organization: { type: 'string' }, department: { type: 'string' }, models: { type: 'string' },
        override: { type: 'string', multiple: true }, ...rateLimitOptions,
      },
      run: (admin, v) => {
        const [kind, id] = typeof v.organization === 'string' ? ['organizations', v.organization] : ['departments', v.department];
        if (typeof id !== 'string' || (v.organization !== undefined && v.department !== undefined)) {
          throw new UsageError('policies set needs exactly one of --organization ID and --department ID');
        }
        return admin('PUT', `/${kind}/${encodeURIComponent(id)}/policy`, defined({
          models: list(v.models),
          modelOverrides: overrides(v.override),
          rateLimits: rateLimits(v),
        }));
      },
    },
  },
  budgets: {
    create: {
      options: { scope: { type: 'string' }, 'scope-id': { type: 'string' }, period: { type: 'string' }, 'limit-usd': { type: 'string' }, tenant: { type: 'string' } },
      run: (admin, v) => {
        if (typeof v.scope !== 'string' || typeof v.period !== 'string' || v['limit-usd'] === undefined) throw new UsageError('budgets create needs --scope, --period and --limit-usd');
        return admin('POST', '/budgets', defined({ scope: v.scope, scopeId: v['scope-id'], period: v.period, limitUsd: dollars(v['limit-usd']), tenantId: v.tenant }));
      },
    },
    list: {
      options: { tenant: { type: 'string' }, scope: { type: 'string' }, 'scope-id': { type: 'string' }, ...paging },
      run: (admin, v) => admin('GET', `/budgets${query(v, { tenant: 'tenantId', scope: 'scope', 'scope-id': 'scopeId', limit: 'limit', cursor: 'cursor' })}`),
      print: listLines(['id', 'scope', 'scopeId', 'period', 'limitUsd', 'tenantId']),
    },
    show: { options: {}, positionals: ['ID'], run: (admin, _v, [id]) => admin('GET', `/budgets/${encodeURIComponent(id!)}`) },
    set: {
      options: { 'limit-usd': { type: 'string' } }, positionals: ['ID'],
      run: (admin, v, [id]) => {
        if (v['limit-usd'] === undefined) throw new UsageError('budgets set needs --limit-usd');
        return admin('PUT', `/budgets/${encodeURIComponent(id!)}`, { limitUsd: dollars(v['limit-usd']) });
      },
    },
    delete: {
      options: {}, positionals: ['ID'],
      run: (admin, _v, [id]) => admin('DELETE', `/budgets/${encodeURIComponent(id!)}`),
      print: (answer) => `deleted ${(answer as { id: string }).id}`,
    },
  },
  jwt: {
    revoke: {
      options: { 'expires-at': { type: 'string' } }, positionals: ['JTI'],
      run: (admin, v, [jti]) => admin('POST', '/jwt/revocations', defined({ jti, expiresAt: v['expires-at'] })),
      print: (answer) => `revoked jti ${(answer as { jti: string }).jti}`,
    },
  },
};

export const ADMIN_GROUPS = Object.keys(COMMANDS);

export async function adminCommand(group: string, args: string[]): Promise<number> {
  const [name, ...rest] = args;
  const command = COMMANDS[group]?.[name ?? ''];
  if (!command) throw new UsageError(`unknown ${group} command "${name ?? ''}" (known: ${Object.keys(COMMANDS[group] ?? {}).join(', ')})`);
  const { values, positionals } = parseArgs({ args: rest, options: { ...common, ...command.options }, allowPositionals: true, strict: true });
  const expected = command.positionals ?? [];
  if (positionals.length !== expected.length) {
    throw new UsageError(`${group} ${name} takes ${expected.length === 0 ? 'no arguments' : expected.join(' ')}`);
  }
  const loaded = await loadConfig({ file: values.config as string | undefined, builtIns });
  const answer = await withAdminApi(loaded, (admin) => command.run(admin, values, positionals));
  const text = values.json || !command.print ? JSON.stringify(answer, null, 2) : command.print(answer);
  process.stdout.write(`${text}\n`);
  return 0;
}
