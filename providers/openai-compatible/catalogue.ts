/**
 * The OpenAI-compatible providers, as data: one entry each. Everything an entry does not say is OpenAI's
 * behaviour (Bearer key when one is configured, POST {baseUrl}/chat/completions, usage asked for with
 * stream_options). Capabilities follow each provider's documentation; where a host serves many open models,
 * `vision` and `tools` are on when at least one of its models takes them (the model refuses otherwise).
 */
import type { JsonSchema } from '../../core/json-schema.ts';
import type { ChatCapability, ProviderTarget } from '../../core/dispatch/provider.ts';
import { mistralEmbeddingsBody, nimEmbeddingsBody, type CompatibleEmbeddings } from './embeddings.ts';
import { openAiShapedImage, togetherImageBody, xaiImageBody } from './images.ts';
import type { ParameterPolicy } from './policy.ts';
import type { CompatibleRerank } from './rerank.ts';
import { fireworksImages, hyperbolicImages, nebiusImages, siliconflowImages, volcengineImages, zhipuImages, type CompatibleImage } from './image-apis/index.ts';
import { togetherVideo, volcengineVideo, xaiVideo, zhipuVideo, type CompatibleVideo } from './video-apis/index.ts';
import { GROQ_SPEECH, SILICONFLOW_SPEECH, TOGETHER_SPEECH, type CompatibleSpeech } from './speech.ts';
import { fireworksAudioBaseUrl, mistralAudioAnswer, mistralAudioForm, togetherAudioForm, type CompatibleAudio } from './transcription.ts';
import {
  choiceUsage, dashscopeWebSearch, githubHeaders, groqBody, groqUsage, mistralBody, openrouterHeaders, openrouterWebSearch, zhipuBody,
  type BodyHook, type ChunkHook,
} from './quirks.ts';

export interface CompatibleEntry {
  slug: string;
  displayName: string;
  /** The public base URL; absent when it holds a placeholder (then `baseUrlTemplate` and baseUrl is required). */
  defaultBaseUrl?: string;
  /** The shape of the base URL the operator fills in, for providers without a default. */
  baseUrlTemplate?: string;
  chat: ChatCapability;
  /** POST /embeddings, as the provider documents it (absent: the provider has no embeddings). */
  embeddings?: CompatibleEmbeddings;
  /**
   * OpenAI's legacy POST /completions (prompt, suffix, echo, best_of, an integer logprobs), as the provider
   * documents it, at `path` when not `/completions` (absent: prompts go through chat). Mistral's FIM endpoint is
   * another API and is not this.
   */
  completion?: { path?: string };
  /** The provider's rerank API (absent: none). */
  rerank?: CompatibleRerank;
  /** POST /audio/transcriptions (and /audio/translations when it says so), as the provider documents it (absent: none). */
  audio?: CompatibleAudio;
  /**
   * Image generation (absent: none): OpenAI's POST /images/generations with the host's differences
   * (openAiShapedImage, images.ts), or the host's own image API (image-apis/).
   */
  image?: CompatibleImage;
  /** POST /audio/speech, as the provider documents it (absent: none). */
  speech?: CompatibleSpeech;
  /** The host's video task API (video-apis/): a task started, then polled by the gateway's job runner (absent: none). */
  video?: CompatibleVideo;
  policy?: ParameterPolicy;
  /** False for providers that reject `stream_options`; their usage comes in the last chunk unasked. */
  streamOptions?: boolean;
  body?: BodyHook;
  chunk?: ChunkHook;
  /** Extra headers (attribution, API versions). */
  headers?(target: ProviderTarget): Record<string, string>;
  /** The provider block's `options`, each with a description. */
  options?: Record<string, JsonSchema>;
  /** Why this entry differs from plain OpenAI, for readers and the docs. */
  notes?: string;
}

const all = { stream: true, tools: true, vision: true, n: true };
const single = { ...all, n: false };
const textOnly = { ...single, vision: false };
/** Sampling knobs OpenAI has and these servers do not: harmless to leave out. */
const OPENAI_ONLY = ['store', 'metadata', 'service_tier', 'prompt_cache_key', 'verbosity', 'modalities', 'audio', 'prediction', 'safety_identifier'];
const NO_LOGPROBS = ['logprobs', 'top_logprobs', 'logit_bias'];
/** OpenAI's legacy completions at /completions. */
const LEGACY = {};
/** Embeddings as OpenAI serves them, with no model that shortens its vectors. */
const EMBED = {};
/** Embeddings whose server documents float output only. */
const EMBED_FLOATS = { base64: false };
/** Hosts of OpenAI's own embedding models (text-embedding-3-* take dimensions). */
const EMBED_OPENAI_MODELS = { dimensions: /(^|\/)text-embedding-3-/ };
/** Whisper as OpenAI serves it: verbose_json, transcriptions and translations. */
const WHISPER = { translation: true };
/** Whisper hosts documenting transcriptions with json and text answers only (no duration: the file's is metered). */
const WHISPER_JSON_ONLY = { format: 'json' } as const;
/** Qwen3-Embedding is Matryoshka-trained: it takes dimensions wherever it is hosted. */
const QWEN3_EMBEDDING = /qwen3-embedding/i;

export const CATALOGUE: readonly CompatibleEntry[] = [
  {
    slug: 'mistral', displayName: 'Mistral AI', defaultBaseUrl: 'https://api.mistral.ai/v1', embeddings: { dimensions: /^codestral-embed/, body: mistralEmbeddingsBody }, chat: all,
    // Mistral rejects unknown fields (422 extra_forbidden), stream_options included; usage ends every stream.
    streamOptions: false,
    policy: {
      refuse: NO_LOGPROBS, rename: { seed: 'random_seed' }, reasoning: { style: 'prompt-mode' },
      allow: ['model', 'messages', 'temperature', 'top_p', 'max_tokens', 'stream', 'stop', 'random_seed', 'response_format', 'tools', 'tool_choice',
        'presence_penalty', 'frequency_penalty', 'n', 'prediction', 'parallel_tool_calls', 'prompt_mode', 'safe_prompt'],
    },
    body: mistralBody,
    // Voxtral: no response_format and no prompt (unknown fields are rejected); usage.prompt_audio_seconds is metered.
    audio: { format: 'none', refuse: ['prompt'], form: mistralAudioForm, answer: mistralAudioAnswer },
    notes: 'tool_choice required -> any; seed -> random_seed; tool-call ids made 9-character alphanumeric; no logprobs.',
  },
  {
    slug: 'groq', displayName: 'Groq', defaultBaseUrl: 'https://api.groq.com/openai/v1', chat: single,
    // Groq rejects logprobs, logit_bias and n > 1: refused before any I/O. Its stream usage is in x_groq.usage.
    streamOptions: false, policy: { refuse: NO_LOGPROBS, drop: OPENAI_ONLY, maxCompletionTokens: true },
    body: groqBody, chunk: groqUsage,
    // Whisper at /openai/v1/audio/*: json, text and verbose_json (no srt or vtt, which the gateway renders itself).
    audio: WHISPER,
    speech: GROQ_SPEECH,
  },
  {
    slug: 'together-ai', completion: LEGACY, displayName: 'Together AI', defaultBaseUrl: 'https://api.together.xyz/v1', embeddings: EMBED_FLOATS, chat: all,
    policy: { drop: OPENAI_ONLY }, notes: 'Finishes with `eos`, mapped to stop.',
    rerank: { shape: 'cohere', path: '/rerank', returnDocuments: false },
    // response_format json or verbose_json; its `language` defaults to en, so none is sent as auto (detect).
    audio: { translation: true, form: togetherAudioForm },
    // n is 1 to 4; width and height instead of size; no quality or style (steps, seed are Together's own).
    image: openAiShapedImage({ maxImages: 4, refuse: ['quality', 'style'], user: false, body: togetherImageBody }),
    speech: TOGETHER_SPEECH,
    // /v2/videos beside the /v1 base; the video URL it answers is public.
    video: togetherVideo,
  },
  {
    slug: 'fireworks-ai', completion: LEGACY, displayName: 'Fireworks AI', defaultBaseUrl: 'https://api.fireworks.ai/inference/v1', embeddings: { base64: false, dimensions: /nomic-embed-text-v1\.5|qwen3-embedding/i }, chat: all, policy: { drop: OPENAI_ONLY },
    audio: { baseUrl: { option: 'audioBaseUrl', default: fireworksAudioBaseUrl } },
    // FLUX's text_to_image workflow under the same base URL; size as its aspect ratios, one image per call.
    image: fireworksImages,
    options: {
      audioBaseUrl: {
        type: 'string',
        description: 'Where audio transcriptions go (OpenAI\'s form, verbose_json). Default: Fireworks\' serverless Whisper hosts, https://audio-turbo.us-virginia-1.direct.fireworks.ai/v1 for whisper-v3-turbo and https://audio-prod.us-virginia-1.direct.fireworks.ai/v1 for the other models; set it to a dedicated endpoint.',
      },
    },
  },
  {
    slug: 'deepseek', completion: { path: '/beta/completions' }, displayName: 'DeepSeek', defaultBaseUrl: 'https://api.deepseek.com', chat: textOnly,
    // No /v1 in the base URL; reasoning_content stays beside content; JSON output is json_object only.
    policy: { drop: OPENAI_ONLY, noJsonSchema: true, reasoning: { style: 'thinking', keepEffort: true } },
  },
  {
    slug: 'xai', displayName: 'xAI', defaultBaseUrl: 'https://api.x.ai/v1', chat: all, policy: { drop: OPENAI_ONLY, maxCompletionTokens: true },
    // n is 1 to 10; size and style are documented as not supported; base64 answers may come as data URLs.
    image: openAiShapedImage({ refuse: ['size', 'style'], body: xaiImageBody }),
    // grok-imagine-video: deferred requests read by request_id.
    video: xaiVideo,
  },
  {
    slug: 'perplexity', displayName: 'Perplexity', defaultBaseUrl: 'https://api.perplexity.ai',
    // Sonar searches the web itself and has no function calling, stop sequences or logprobs.
    chat: { ...single, tools: false, builtInTools: ['web_search'] }, streamOptions: false,
    policy: { refuse: ['stop', ...NO_LOGPROBS], drop: [...OPENAI_ONLY, 'seed', 'user', 'parallel_tool_calls', 'tool_choice'] },
  },
  {
    slug: 'openrouter', completion: LEGACY, displayName: 'OpenRouter', defaultBaseUrl: 'https://openrouter.ai/api/v1',
    embeddings: EMBED_OPENAI_MODELS, chat: { ...single, builtInTools: ['web_search'] }, policy: { reasoning: { style: 'openrouter' } },
    body: openrouterWebSearch, headers: openrouterHeaders,
    options: {
      siteUrl: { type: 'string', description: 'Sent as HTTP-Referer: the site OpenRouter attributes requests to.' },
      appName: { type: 'string', description: 'Sent as X-Title: the app name OpenRouter shows for requests.' },
    },
  },
  { slug: 'cerebras', completion: LEGACY, displayName: 'Cerebras', defaultBaseUrl: 'https://api.cerebras.ai/v1', chat: textOnly, policy: { drop: OPENAI_ONLY, maxCompletionTokens: true } },
  { slug: 'sambanova', displayName: 'SambaNova', defaultBaseUrl: 'https://api.sambanova.ai/v1', chat: single, policy: { drop: OPENAI_ONLY }, audio: WHISPER_JSON_ONLY },
  {
    slug: 'deepinfra', completion: LEGACY, displayName: 'DeepInfra', defaultBaseUrl: 'https://api.deepinfra.com/v1/openai', embeddings: { dimensions: QWEN3_EMBEDDING }, chat: all, policy: { drop: OPENAI_ONLY },
    // OpenAI's form at /v1/openai/audio/transcriptions; every OpenAI response_format, verbose_json included.
    audio: {},
    // OpenAI's image request at /v1/openai/images/generations; it answers b64_json only.
    image: openAiShapedImage({ responseFormat: 'b64_json' }),
  },
  { slug: 'nebius', completion: LEGACY, displayName: 'Nebius AI Studio', defaultBaseUrl: 'https://api.studio.nebius.ai/v1', embeddings: EMBED_FLOATS, chat: all, policy: { drop: OPENAI_ONLY }, image: nebiusImages },
  { slug: 'novita-ai', completion: LEGACY, displayName: 'Novita AI', defaultBaseUrl: 'https://api.novita.ai/v3/openai', chat: all, policy: { drop: OPENAI_ONLY } },
  { slug: 'hyperbolic', completion: LEGACY, displayName: 'Hyperbolic', defaultBaseUrl: 'https://api.hyperbolic.xyz/v1', chat: single, policy: { drop: OPENAI_ONLY }, image: hyperbolicImages },
  {
    slug: 'volcengine', displayName: 'Volcengine Ark', defaultBaseUrl: 'https://ark.cn-beijing.volces.com/api/v3', embeddings: EMBED, chat: single,
    policy: { drop: OPENAI_ONLY, reasoning: { style: 'thinking' } }, notes: 'The model is a model id or an endpoint id (ep-...).',
    image: volcengineImages,
    // Seedance tasks, their parameters as the prompt's --commands.
    video: volcengineVideo,
    options: { imageWatermark: { type: 'boolean', default: false, description: 'Images: ask Ark to watermark them (its own default is to; the gateway asks it not to unless this is true).' } },
  },
  {
    slug: 'nscale', displayName: 'nscale', defaultBaseUrl: 'https://inference.api.nscale.com/v1', chat: single, policy: { drop: OPENAI_ONLY },
    // The image request documents model, prompt, size and n only; the answer is b64_json.
    image: openAiShapedImage({ responseFormat: 'none', refuse: ['quality', 'style'], user: false }),
  },
  { slug: 'featherless-ai', completion: LEGACY, displayName: 'Featherless AI', defaultBaseUrl: 'https://api.featherless.ai/v1', chat: textOnly, policy: { drop: OPENAI_ONLY } },
  {
    slug: 'moonshot', displayName: 'Moonshot AI (Kimi)', defaultBaseUrl: 'https://api.moonshot.ai/v1', chat: all,
    policy: { drop: OPENAI_ONLY }, chunk: choiceUsage, notes: 'Streams usage inside choices[0].usage.',
  },
  {
    slug: 'zhipu', displayName: 'Zhipu AI (GLM)', defaultBaseUrl: 'https://open.bigmodel.cn/api/paas/v4',
    embeddings: { base64: false, dimensions: /^embedding-3/ }, chat: { ...single, builtInTools: ['web_search'] }, policy: { drop: OPENAI_ONLY, refuse: ['logit_bias'], reasoning: { style: 'thinking' } },
    body: zhipuBody, notes: 'tool_choice is auto only; finish reason `sensitive` is content_filter.', image: zhipuImages,
    // CogVideoX and Vidu tasks, read at /async-result/{id}.
    video: zhipuVideo,
  },
  {
    slug: 'dashscope', displayName: 'Alibaba Cloud Model Studio (DashScope)', defaultBaseUrl: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1',
    embeddings: { base64: false, dimensions: /^text-embedding-v[34]/ }, chat: { ...all, builtInTools: ['web_search'] }, policy: { drop: OPENAI_ONLY, reasoning: { style: 'enable-thinking' } }, body: dashscopeWebSearch,
  },
  {
    slug: 'siliconflow', displayName: 'SiliconFlow', defaultBaseUrl: 'https://api.siliconflow.cn/v1', embeddings: { dimensions: QWEN3_EMBEDDING }, chat: single,
    policy: { drop: OPENAI_ONLY, reasoning: { style: 'enable-thinking' } },
    rerank: { shape: 'cohere', path: '/rerank', returnDocuments: false },
    // SenseVoice and TeleSpeechASR: the form documents file and model only, the answer {text} only.
    audio: { format: 'none', refuse: ['language', 'prompt', 'temperature'] },
    image: siliconflowImages,
    speech: SILICONFLOW_SPEECH,
    options: {
      speechGain: { type: 'number', minimum: -10, maximum: 10, description: 'Sent as gain on text to speech: the volume in dB, -10 to 10. Unset: SiliconFlow\'s default (0).' },
    },
  },
  { slug: 'upstage', displayName: 'Upstage', defaultBaseUrl: 'https://api.upstage.ai/v1', embeddings: EMBED_FLOATS, chat: textOnly, policy: { drop: OPENAI_ONLY } },
  {
    slug: 'ai21', displayName: 'AI21 Labs', defaultBaseUrl: 'https://api.ai21.com/studio/v1', chat: { ...all, vision: false },
    // Jamba: usage comes in the last chunk unasked; JSON output is json_object only.
    streamOptions: false, policy: { drop: OPENAI_ONLY, refuse: NO_LOGPROBS, noJsonSchema: true, reasoning: { style: 'none' } },
  },
  {
    slug: 'nvidia-nim', completion: LEGACY, displayName: 'NVIDIA NIM', defaultBaseUrl: 'https://integrate.api.nvidia.com/v1', embeddings: { dimensions: /llama-3\.2-nv-embedqa-1b|nemoretriever|nemotron-embed/i, body: nimEmbeddingsBody }, chat: single, policy: { drop: OPENAI_ONLY },
    // A self-hosted NIM serves /v1/ranking; NVIDIA's hosted catalogue has a URL per reranker (set baseUrl to it).
    rerank: { shape: 'nvidia-ranking', path: '/ranking' },
    options: { embeddingInputType: { type: 'string', enum: ['query', 'passage'], default: 'query', description: 'Sent as input_type on embeddings: NVIDIA\'s retrieval models embed queries and passages differently.' } },
  },
  {
    slug: 'github-models', displayName: 'GitHub Models', defaultBaseUrl: 'https://models.github.ai/inference', embeddings: EMBED_OPENAI_MODELS, chat: single,
    policy: { drop: OPENAI_ONLY }, headers: githubHeaders, notes: 'Models are named publisher/model (openai/gpt-4.1); the key is a GitHub token.',
  },
  {
    slug: 'workers-ai', displayName: 'Cloudflare Workers AI', baseUrlTemplate: 'https://api.cloudflare.com/client/v4/accounts/{account}/ai/v1',
    embeddings: EMBED_FLOATS, chat: textOnly, policy: { drop: OPENAI_ONLY },
  },
  { slug: 'huggingface', displayName: 'Hugging Face Inference Providers', defaultBaseUrl: 'https://router.huggingface.co/v1', chat: single, policy: { drop: OPENAI_ONLY } },
  {
    slug: 'ollama', completion: LEGACY, displayName: 'Ollama', defaultBaseUrl: 'http://localhost:11434/v1', embeddings: EMBED_FLOATS, chat: single,
    policy: { drop: OPENAI_ONLY }, notes: 'No key: no Authorization header unless apiKey is set (a proxy in front, Ollama cloud).',
  },
  {
    slug: 'vllm', completion: LEGACY, displayName: 'vLLM', embeddings: { dimensions: /./ }, chat: all, baseUrlTemplate: 'http://{host}:8000/v1',
    rerank: { shape: 'cohere', path: '/rerank' }, policy: { maxCompletionTokens: true }, audio: WHISPER,
    notes: 'Operator-supplied base URL; the key is optional (vllm serve --api-key). Embeddings pass dimensions on: the server refuses them (400) for a model that is not Matryoshka-trained. Audio asks for verbose_json, which vLLM serves since its speech-to-text API gained it (older servers answer json and text only).',
  },
  {
    slug: 'databricks', completion: LEGACY, displayName: 'Databricks Model Serving', baseUrlTemplate: 'https://{workspace}/serving-endpoints', embeddings: EMBED_FLOATS, chat: all,
    // The model is the serving endpoint's name; usage comes in the last chunk unasked.
    streamOptions: false, policy: { drop: OPENAI_ONLY },
  },
];
