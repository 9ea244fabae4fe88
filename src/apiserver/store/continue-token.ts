/**
 * Opaque list continuation tokens: the snapshot revision and the last key
 * returned. Clients must not interpret them; we validate them strictly.
 */
import { errors } from '../errors.js';

export interface ContinuePosition {
  revision: number;
  startAfter: string;
}

export function encodeContinue(position: ContinuePosition): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: position.revision, start: position.startAfter })).toString('base64url');
}

export function decodeContinue(token: string, prefix: string): ContinuePosition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw errors.badRequest('continue key is not valid: invalid encoding');
  }
  const p = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (p?.v !== 'meta.k8s.io/v1' || typeof p.rv !== 'number' || !Number.isInteger(p.rv) || p.rv <= 0 || typeof p.start !== 'string') {
    throw errors.badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
  if (!p.start.startsWith(prefix)) throw errors.badRequest('continue key is not valid: key is outside the requested range');
  return { revision: p.rv, startAfter: p.start };
}
