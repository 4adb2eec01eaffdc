/**
 * Vertex AI ranking: the Discovery Engine ranking API (semantic-ranker-* models), POST
 * {rankingUrl}/projects/{project}/locations/global/rankingConfigs/default_ranking_config:rank with records
 * [{id, content}], answered records [{id, score}] with scores in 0..1. It lives on its own host, so the request
 * carries an absolute URL; the OAuth token is the one Vertex chat uses (authorizeVertex). At most 200 records
 * a call. Google bills ranking per request, reported nowhere in the answer: search units follow Cohere's rule.
 */
import type { JsonSchema } from '../../core/json-schema.ts';
import type { RerankTranslator } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { malformedAnswer } from '../shared/embeddings.ts';
import { checkDocumentCap, rerankResult } from '../shared/rerank.ts';

export const DEFAULT_RANKING_URL = 'https://discoveryengine.googleapis.com/v1';
const MAX_RECORDS = 200;

export const vertexRankingOptions: Record<string, JsonSchema> = {
  rankingUrl: {
    type: 'string', pattern: '^https?://', default: DEFAULT_RANKING_URL,
    description: 'Base URL of the Discovery Engine ranking API that serves rerank (semantic-ranker-* models) for options.project.',
  },
};

export const vertexRerank: RerankTranslator = {
  toUpstream(request, target) {
    const { project, rankingUrl } = target.options as { project?: string; rankingUrl?: string };
    if (!project) throw new GatewayError('UPSTREAM_ERROR', `${target.slug}: rerank needs options.project (the ranking API is addressed by project)`, { provider: target.slug });
    checkDocumentCap(target, request, MAX_RECORDS);
    const base = (rankingUrl ?? DEFAULT_RANKING_URL).replace(/\/+$/, '');
    const body = {
      model: target.upstreamModel,
      query: request.query,
      records: request.documents.map((content, i) => ({ id: String(i), content })),
      ...(request.top_n !== undefined ? { topN: request.top_n } : {}),
      // The gateway adds the documents itself when asked: only ids and scores need to come back.
      ignoreRecordDetailsInResponse: true,
    };
    return {
      method: 'POST',
      path: `${base}/projects/${encodeURIComponent(project)}/locations/global/rankingConfigs/default_ranking_config:rank`,
      // Bills the project the ranking runs in, which user credentials need and a service account does not mind.
      headers: { ...target.headers, 'content-type': 'application/json', accept: 'application/json', 'x-goog-user-project': project },
      body: JSON.stringify(body),
    };
  },
  fromUpstream(body, target, request) {
    const answer = body as { records?: unknown } | null;
    if (!answer || typeof answer !== 'object') throw malformedAnswer(target, 'ranking answer');
    // An answer with no record relevant enough has no records field at all.
    const records = answer.records ?? [];
    if (!Array.isArray(records)) throw malformedAnswer(target, 'ranking answer (records is not a list)');
    const scores = records.map((r) => {
      const record = r as { id?: unknown; score?: unknown } | null;
      const id = typeof record?.id === 'string' && /^\d+$/.test(record.id) ? Number(record.id) : record?.id;
      // proto3 JSON leaves out a zero score.
      return { index: id, score: record?.score ?? 0 };
    });
    return rerankResult({ scores, scale: 'probability' }, target, request);
  },
};
