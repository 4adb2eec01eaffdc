/**
 * Token estimates for providers that report no usage. The tokenizer is OpenAI's o200k_base (tokenizer.ts):
 * exact for current OpenAI models, an approximation for others. Usage built here is flagged as estimated on
 * the request (gw.usageEstimated), never on the wire.
 */
import type { ChatCompletionRequest, ChatMessage, Usage } from './chat.ts';
import { embeddingInputs, type EmbeddingsRequest } from './embeddings.ts';
import type { RerankRequest } from './rerank.ts';
import { loadTokenizer, tokenizerNow } from './tokenizer.ts';

type Counter = (text: string) => number;

/** Loaded on first use (tokenizer.ts): most providers report usage themselves. */
function loadCounter(): Promise<Counter> {
  return loadTokenizer().then((tokenizer) => tokenizer.count);
}

/** Per-message overhead of the chat format (role and separators), as OpenAI documents it. */
const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_REPLY = 3;

function messageText(message: ChatMessage): string {
  const parts: string[] = [message.role];
  if (typeof message.content === 'string') parts.push(message.content);
  else if (Array.isArray(message.content)) {
    for (const part of message.content) if (part.type === 'text') parts.push(part.text);
  }
  if (message.name) parts.push(message.name);
  for (const call of message.tool_calls ?? []) parts.push(call.function.name, call.function.arguments);
  return parts.join('\n');
}

/**
 * One count per request body before the call: ratelimit and budget both reserve against the same prompt (or
 * inputs), and counting is the costliest step of either. A plugin that rewrites the prompt must build a new body
 * object.
 */
// Kept on the body under a private symbol, non-enumerable so that a copy ({ ...body }) starts without it; a WeakMap
// keyed by every request's body grew and rehashed its table, and the collector traced its entries as ephemerons.
const ESTIMATE = Symbol('aigw.estimate');

/** The same count as a number, when it was made within the call (cachedCountNow). */
const COUNTED = Symbol('aigw.counted');

type Body = ChatCompletionRequest | EmbeddingsRequest | RerankRequest;
type Estimated = Body & { [ESTIMATE]?: Promise<number>; [COUNTED]?: number };

function remember(body: Body, key: typeof ESTIMATE | typeof COUNTED, value: Promise<number> | number): void {
  if (Object.isExtensible(body)) Object.defineProperty(body, key, { value, enumerable: false, configurable: true });
}

function cachedCount<B extends Body>(body: B, count: (body: B, counter: Counter) => number): Promise<number> {
  const known = (body as Estimated)[ESTIMATE];
  if (known) return known;
  const counted = (body as Estimated)[COUNTED];
  const estimate = counted !== undefined ? Promise.resolve(counted) : loadCounter().then((counter) => count(body, counter));
  remember(body, ESTIMATE, estimate);
  return estimate;
}

/**
 * The count within the call once the tokenizer is loaded (undefined before: cachedCount then loads it). A body
 * counted asynchronously before is counted again here, once: that happens only while the tokenizer loads.
 */
function cachedCountNow<B extends Body>(body: B, count: (body: B, counter: Counter) => number): number | undefined {
  const known = (body as Estimated)[COUNTED];
  if (known !== undefined) return known;
  const counter = tokenizerNow()?.count;
  if (!counter) return undefined;
  const counted = count(body, counter);
  remember(body, COUNTED, counted);
  return counted;
}

export function estimatePromptTokens(request: ChatCompletionRequest): Promise<number> {
  return cachedCount(request, promptTokens);
}

/** estimatePromptTokens within the call, once the tokenizer is loaded; undefined before. */
export function estimatePromptTokensNow(request: ChatCompletionRequest): number | undefined {
  return cachedCountNow(request, promptTokens);
}

function promptTokens(request: ChatCompletionRequest, count: Counter): number {
  let tokens = TOKENS_PER_REPLY;
  for (const message of request.messages) tokens += TOKENS_PER_MESSAGE + count(messageText(message));
  if (request.tools && request.tools.length > 0) tokens += count(JSON.stringify(request.tools));
  return tokens;
}

export async function estimateUsage(request: ChatCompletionRequest, completionText: string): Promise<Usage> {
  const count = await loadCounter();
  // Counted again: this is the prompt as sent, after every plugin had its say.
  const prompt = promptTokens(request, count);
  const completion = completionText === '' ? 0 : count(completionText);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/**
 * The input tokens of an embeddings request: every input's text, with no format overhead (providers count the
 * texts alone). Counted once per body, as the chat prompt is.
 */
export function estimateEmbeddingsTokens(request: EmbeddingsRequest): Promise<number> {
  return cachedCount(request, embeddingsTokens);
}

/** estimateEmbeddingsTokens within the call, once the tokenizer is loaded; undefined before. */
export function estimateEmbeddingsTokensNow(request: EmbeddingsRequest): number | undefined {
  return cachedCountNow(request, embeddingsTokens);
}

function embeddingsTokens(request: EmbeddingsRequest, count: Counter): number {
  let tokens = 0;
  for (const input of embeddingInputs(request)) tokens += count(input);
  return tokens;
}

/**
 * The tokens a reranker reads: a cross-encoder reads the query beside every document, so the query counts once
 * per document (as Voyage defines a rerank's total tokens), plus every document once.
 */
export function estimateRerankTokens(request: RerankRequest): Promise<number> {
  return cachedCount(request, rerankTokens);
}

/** estimateRerankTokens within the call, once the tokenizer is loaded; undefined before. */
export function estimateRerankTokensNow(request: RerankRequest): number | undefined {
  return cachedCountNow(request, rerankTokens);
}

function rerankTokens(request: RerankRequest, count: Counter): number {
  let tokens = count(request.query) * request.documents.length;
  for (const document of request.documents) tokens += count(document);
  return tokens;
}
