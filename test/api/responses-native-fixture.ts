/**
 * A gateway for the native Responses tests: openai and azure-openai both on the fake Responses API (openai's base
 * URL /v1, azure's /openai, with a deployment map), and a responses pipeline with auth and usage.
 */
export function nativeConfig(fakeUrl: string, openaiOptions = ''): string {
  return `
providers:
  openai:
    baseUrl: ${fakeUrl}/v1
    apiKey: sk-upstream-secret
${openaiOptions}
  azure-openai:
    baseUrl: ${fakeUrl}/openai
    apiKey: azure-key
    options: { deployments: { gpt-4.1: my-gpt41 } }
models:
  - id: gpt-4.1
    provider: openai
    upstreamModel: gpt-4.1
  - id: azure-gpt
    provider: azure-openai
    upstreamModel: gpt-4.1
routing:
  retries: 0
upstream:
  breaker:
    volumeThreshold: 1000
pipelines:
  - name: responses
    routes: [/v1/responses]
    plugins: [auth, usage]
`;
}
