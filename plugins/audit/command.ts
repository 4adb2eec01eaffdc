/** `aigw audit verify [--config FILE]`: checks the chain; exit 0 with a count when intact, 1 naming the first problem. */
import type { PluginCommand } from '../../core/pipeline/plugin.ts';
import { firstEntry, PLUGIN_NAME } from './config.ts';
import { verifyChain } from './verify.ts';

export const auditCommand: PluginCommand = {
  name: PLUGIN_NAME,
  usage: '  audit verify [--config FILE]     check the audit log\'s hash chain; exit 1 naming the first edited, deleted, inserted or reordered record',
  async run(args, context) {
    if (args.length !== 1 || args[0] !== 'verify') {
      context.err('usage: aigw audit verify [--config FILE]\n');
      return 2;
    }
    const result = await verifyChain(context.db, firstEntry(context.config)?.checkpointKey);
    if (result.ok) {
      const span = result.records === 0 ? 'no records' : `${result.records} records (seq ${result.firstSeq} to ${result.lastSeq})`;
      const from = result.checkpointSeq === null ? '' : `, from the signed checkpoint at seq ${result.checkpointSeq}`;
      context.out(`audit log intact: ${span}${from}\n`);
      return 0;
    }
    const request = result.requestId ? ` (request id ${result.requestId})` : '';
    context.err(`audit log verification failed: ${result.kind} record at seq ${result.seq}${request}: ${result.message}\n`);
    return 1;
  },
};
