/**
 * The upload fields of POST /v1/files, from a JSON body or from a form's string parts: provider, purpose,
 * expires_in_seconds (the registry's TTL) and metadata (an object; in a form, JSON text or `metadata[key]` parts).
 */
import { FILE_PURPOSES, type FilePurpose } from '../dispatch/provider-files.ts';
import { validationError, type ValidationIssue } from '../errors.ts';

export interface UploadFields {
  provider: string;
  purpose: FilePurpose;
  expiresInSeconds: number | null;
  metadata: Record<string, unknown> | null;
}

/** A TTL up to ten years; the spec sets no bound, a registry entry needs one that fits a timestamp. */
const MAX_TTL_SECONDS = 10 * 365 * 24 * 3600;
const MAX_METADATA_BYTES = 16 * 1024;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function ttl(value: unknown, fromForm: boolean, issues: ValidationIssue[]): number | null {
  if (value === undefined) return null;
  const number = fromForm && typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number) || number < 1 || number > MAX_TTL_SECONDS) {
    issues.push({ path: '/expires_in_seconds', message: `must be an integer from 1 to ${MAX_TTL_SECONDS}` });
    return null;
  }
  return number;
}

function metadataOf(value: unknown, nested: Record<string, string>, fromForm: boolean, issues: ValidationIssue[]): Record<string, unknown> | null {
  let metadata: unknown = value;
  if (fromForm && typeof value === 'string') {
    try {
      metadata = JSON.parse(value);
    } catch {
      metadata = undefined;
      issues.push({ path: '/metadata', message: 'must be a JSON object' });
      return null;
    }
  }
  if (metadata === undefined || metadata === null) return Object.keys(nested).length > 0 ? { ...nested } : null;
  if (!isObject(metadata)) {
    issues.push({ path: '/metadata', message: 'must be an object' });
    return null;
  }
  const merged = { ...metadata, ...nested };
  if (Buffer.byteLength(JSON.stringify(merged)) > MAX_METADATA_BYTES) issues.push({ path: '/metadata', message: `must be at most ${MAX_METADATA_BYTES} bytes as JSON` });
  return merged;
}

/**
 * `beforeFile`: the form's file part has just begun, so provider and purpose must have come before it (the
 * bytes go upstream as they arrive, to the provider these name).
 */
export function uploadFields(raw: Record<string, unknown>, from: 'json' | 'multipart', nested: Record<string, string> = {}, beforeFile = false): UploadFields {
  const issues: ValidationIssue[] = [];
  const fromForm = from === 'multipart';
  const order = beforeFile ? ' (a form part before the file part)' : '';
  const provider = raw.provider;
  if (typeof provider !== 'string' || provider === '') issues.push({ path: '/provider', message: `is required: a provider slug${order}` });
  const purpose = raw.purpose;
  if (purpose === undefined) issues.push({ path: '/purpose', message: `is required${order}` });
  else if (!(FILE_PURPOSES as readonly unknown[]).includes(purpose)) issues.push({ path: '/purpose', message: `must be one of ${FILE_PURPOSES.join(', ')}` });
  const expiresInSeconds = ttl(raw.expires_in_seconds, fromForm, issues);
  const metadata = metadataOf(raw.metadata, nested, fromForm, issues);
  if (issues.length > 0) throw validationError(issues);
  return { provider: provider as string, purpose: purpose as FilePurpose, expiresInSeconds, metadata };
}
