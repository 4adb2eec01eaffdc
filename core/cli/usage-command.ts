/**
 * aigw usage: the deployment's usage (GET /admin/v1/usage, served by the usage plugin) as a table, or as the
 * API's answer with --json. It goes through the admin API like the other admin commands (admin-client.ts).
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../boot/load.ts';
import { builtIns } from './builtins.ts';
import { withAdminApi } from './admin-client.ts';
import { UsageError } from './admin-commands.ts';

export const USAGE_COMMAND_USAGE = `  usage [--tenant ID] [--from WHEN] [--to WHEN] [--group-by model,provider,key,day,modality]
        [--limit N] [--cursor C] [--config FILE] [--json]
                                   the deployment's usage (or a tenant's) over a window (default the last 30 days);
                                   WHEN: ISO 8601 or unix seconds
`;

const SUM_COLUMNS = ['requests', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'cost_usd'];

interface UsageAnswer {
  data: Array<Record<string, unknown>>;
  has_more: boolean;
  next_cursor: string | null;
  from: string;
  to: string;
  group_by: string[];
}

export async function usageCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      config: { type: 'string', short: 'c' }, json: { type: 'boolean', default: false }, tenant: { type: 'string' },
      from: { type: 'string' }, to: { type: 'string' }, 'group-by': { type: 'string' }, limit: { type: 'string' }, cursor: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 0) throw new UsageError('usage takes no arguments');
  const params = new URLSearchParams();
  const names = { tenant: 'tenantId', from: 'from', to: 'to', 'group-by': 'group_by', limit: 'limit', cursor: 'cursor' } as const;
  for (const [option, param] of Object.entries(names)) {
    const value = values[option as keyof typeof names];
    if (typeof value === 'string') params.set(param, value);
  }
  const loaded = await loadConfig({ file: values.config, builtIns });
  const query = params.toString();
  const answer = (await withAdminApi(loaded, (admin) => admin('GET', `/usage${query ? `?${query}` : ''}`))) as UsageAnswer;
  process.stdout.write(`${values.json ? JSON.stringify(answer, null, 2) : usageTable(answer)}\n`);
  return 0;
}

/** Aligned columns: the groups asked for, then the sums; a line for the window, and one for the next page. */
export function usageTable(answer: UsageAnswer): string {
  const columns = [...answer.group_by, ...SUM_COLUMNS];
  const cell = (row: Record<string, unknown>, column: string) => {
    const value = row[column];
    if (value === null || value === undefined) return '-';
    return column === 'cost_usd' ? Number(value).toFixed(6) : String(value);
  };
  const rows = [columns, ...answer.data.map((row) => columns.map((c) => cell(row, c)))];
  const widths = columns.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const lines = rows.map((r) => r.map((text, i) => (i < answer.group_by.length ? text.padEnd(widths[i]!) : text.padStart(widths[i]!))).join('  ').trimEnd());
  lines.unshift(`usage from ${answer.from} to ${answer.to}`);
  if (answer.data.length === 0) lines.push('(no usage in this window)');
  if (answer.has_more) lines.push(`(more: --cursor ${answer.next_cursor})`);
  return lines.join('\n');
}
