/** The built-in provider translators, one line each. Third-party ones are named under `providerPackages`. */
import openai from './openai/index.ts';
import anthropic from './anthropic/index.ts';
import cohere from './cohere/index.ts';
import watsonx from './watsonx/index.ts';
import replicate from './replicate/index.ts';
import gemini from './gemini/index.ts';
import vertexAi from './vertex-ai/index.ts';
import bedrock from './bedrock/index.ts';
import voyage from './voyage/index.ts';
import jina from './jina/index.ts';
import deepgram from './deepgram/index.ts';
import assemblyai from './assemblyai/index.ts';
import elevenlabs from './elevenlabs/index.ts';
import falAi from './fal-ai/index.ts';
import recraft from './recraft/index.ts';
import stabilityAi from './stability-ai/index.ts';
import runway from './runway/index.ts';
import { openAiCompatibleProviders } from './openai-compatible/index.ts';
import { azureProviders } from './azure-openai/index.ts';

export const builtInProviders = [openai, anthropic, cohere, watsonx, replicate, gemini, vertexAi, bedrock, voyage, jina, deepgram, assemblyai, elevenlabs, falAi, recraft, stabilityAi, runway, ...openAiCompatibleProviders, ...azureProviders];
