/** A batch's completion webhook URL, checked with the outbound rules at submit. */
import { validationError } from '../errors.ts';
import type { LocalEndpointDeps } from '../ingress/endpoint.ts';
import { checkUrl, compileOutboundPolicy, OutboundRefusedError } from '../outbound/policy.ts';

export function webhookUrl(deps: LocalEndpointDeps, url: string | null): string | null {
  if (url === null) return null;
  try {
    return checkUrl(url, compileOutboundPolicy(deps.config.outbound)).href;
  } catch (err) {
    if (err instanceof OutboundRefusedError) throw validationError([{ path: '/completion_webhook_url', message: `is refused: ${err.reason}` }]);
    throw err;
  }
}
