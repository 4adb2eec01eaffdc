/** GenerateContentResponse -> canonical: parts, finish reasons, usage and logprobs (also used by the stream). */
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../core/canonical/chat.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { toolCallId } from './tool-ids.ts';

interface Part {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { name?: string; args?: unknown };
  executableCode?: { language?: string; code?: string };
  codeExecutionResult?: { outcome?: string; output?: string };
}

export interface Candidate {
  index?: number;
  content?: { parts?: Part[] };
  finishReason?: string;
  logprobsResult?: {
    chosenCandidates?: Array<{ token?: string; logProbability?: number }>;
    topCandidates?: Array<{ candidates?: Array<{ token?: string; logProbability?: number }> }>;
  };
}

export interface UsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  cachedContentTokenCount?: number;
}

export interface GenerateContentResponse {
  candidates?: Candidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: UsageMetadata;
  modelVersion?: string;
  responseId?: string;
}

const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

/** Gemini says STOP after function calls too: a candidate that called functions finished with tool_calls. */
export function finishReason(reason: string | undefined, calledTools: boolean): FinishReason | null {
  if (!reason || reason === 'FINISH_REASON_UNSPECIFIED') return null;
  if (reason === 'MAX_TOKENS') return 'length';
  if (FILTERED.has(reason)) return 'content_filter';
  return calledTools ? 'tool_calls' : 'stop';
}

/** completion_tokens includes thinking, as OpenAI's does; reasoning_tokens says how much of it. */
export function usageFrom(meta: UsageMetadata | undefined): Usage | undefined {
  if (!meta) return undefined;
  const prompt = (meta.promptTokenCount ?? 0) + (meta.toolUsePromptTokenCount ?? 0);
  const completion = (meta.candidatesTokenCount ?? 0) + (meta.thoughtsTokenCount ?? 0);
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (meta.cachedContentTokenCount) usage.prompt_tokens_details = { cached_tokens: meta.cachedContentTokenCount };
  if (meta.thoughtsTokenCount) usage.completion_tokens_details = { reasoning_tokens: meta.thoughtsTokenCount };
  return usage;
}

/**
 * What one candidate's parts say, in canonical pieces. Tool-call indexes continue from `firstCall`; `key`
 * (response id and candidate) makes the call ids reproducible.
 */
export interface PartsSummary {
  text: string;
  reasoning: string;
  toolCalls: ToolCall[];
}

export function readParts(parts: Part[] | undefined, firstCall = 0, key?: string): PartsSummary {
  const out: PartsSummary = { text: '', reasoning: '', toolCalls: [] };
  for (const part of parts ?? []) {
    if (part.functionCall) {
      out.toolCalls.push({
        id: toolCallId(firstCall + out.toolCalls.length, part.thoughtSignature, key),
        type: 'function',
        function: { name: part.functionCall.name ?? '', arguments: JSON.stringify(part.functionCall.args ?? {}) },
      });
    } else if (part.executableCode) {
      // Code the model ran with the code-execution tool, and its result, are part of the answer's text.
      out.text += `\n\`\`\`${(part.executableCode.language ?? '').toLowerCase()}\n${part.executableCode.code ?? ''}\n\`\`\`\n`;
    } else if (part.codeExecutionResult) {
      out.text += `\n\`\`\`output\n${part.codeExecutionResult.output ?? ''}\n\`\`\`\n`;
    } else if (typeof part.text === 'string') {
      if (part.thought) out.reasoning += part.text;
      else out.text += part.text;
    }
  }
  return out;
}

/** Gemini's logprobs -> OpenAI's {content: [{token, logprob, bytes, top_logprobs}]}. */
export function logprobsFrom(result: Candidate['logprobsResult']): unknown {
  if (!result?.chosenCandidates) return undefined;
  return {
    content: result.chosenCandidates.map((chosen, i) => ({
      token: chosen.token ?? '',
      logprob: chosen.logProbability ?? 0,
      bytes: null,
      top_logprobs: (result.topCandidates?.[i]?.candidates ?? []).map((c) => ({ token: c.token ?? '', logprob: c.logProbability ?? 0, bytes: null })),
    })),
  };
}

export function malformed(target: ProviderTarget, what: string): GatewayError {
  return new GatewayError('UPSTREAM_ERROR', `${target.slug} returned a malformed ${what}`, { provider: target.slug });
}

export function completionId(response: GenerateContentResponse): string {
  return `chatcmpl-${response.responseId ?? crypto.randomUUID()}`;
}

export function geminiCompletion(body: unknown, target: ProviderTarget): ChatCompletion {
  const response = body as GenerateContentResponse | null;
  if (!response || typeof response !== 'object' || Array.isArray(response)) throw malformed(target, 'response');
  if (response.candidates !== undefined && !Array.isArray(response.candidates)) throw malformed(target, 'response');
  const candidates = response.candidates ?? [];
  const choices: ChatCompletion['choices'] = candidates.map((candidate, position) => {
    const index = candidate.index ?? position;
    const read = readParts(candidate.content?.parts, 0, response.responseId && `${response.responseId}:${index}`);
    const message: ChatCompletion['choices'][number]['message'] & { reasoning_content?: string } = {
      role: 'assistant',
      content: read.text === '' && read.toolCalls.length > 0 ? null : read.text,
    };
    if (read.toolCalls.length > 0) message.tool_calls = read.toolCalls;
    if (read.reasoning) message.reasoning_content = read.reasoning;
    const choice: ChatCompletion['choices'][number] = {
      index,
      message,
      finish_reason: finishReason(candidate.finishReason, read.toolCalls.length > 0) ?? 'stop',
    };
    const logprobs = logprobsFrom(candidate.logprobsResult);
    if (logprobs) choice.logprobs = logprobs;
    return choice;
  });
  // A blocked prompt has no candidates at all: the caller gets an empty, filtered answer.
  if (choices.length === 0) {
    if (!response.promptFeedback?.blockReason) throw malformed(target, 'response (no candidates)');
    choices.push({ index: 0, message: { role: 'assistant', content: null }, finish_reason: 'content_filter' });
  }
  const completion: ChatCompletion = {
    id: completionId(response),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: response.modelVersion ?? target.upstreamModel,
    choices,
  };
  const usage = usageFrom(response.usageMetadata);
  if (usage) completion.usage = usage;
  return completion;
}
