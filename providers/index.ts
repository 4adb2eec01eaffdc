/** The built-in provider translators, one line each. Third-party ones are named under `providerPackages`. */
import openai from './openai/index.ts';

export const builtInProviders = [openai];
