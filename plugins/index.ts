/** The built-in plugins, one line each. Third-party plugins are named in pipelines.yaml under `plugins`. */
import audit from './audit/index.ts';
import auth from './auth/index.ts';
import budget from './budget/index.ts';
import guards from './guards/index.ts';
import ipAllow from './ip-allow/index.ts';
import rag from './rag/index.ts';
import ratelimit from './ratelimit/index.ts';
import semanticCache from './semantic-cache/index.ts';
import usage from './usage/index.ts';

export const builtInPlugins = [auth, ipAllow, ratelimit, rag, usage, budget, semanticCache, guards, audit];

/**
 * The implicit `default` pipeline of a file that declares none: every built-in that works unconfigured, in the
 * order they must run (rag needs its vector stores named). semantic-cache and guards are not among them either:
 * serving stored answers, or refusing and redacting, changes what callers get, so an operator turns them on per pipeline.
 */
export const defaultPipeline = [auth.name, ipAllow.name, ratelimit.name, budget.name, usage.name];
