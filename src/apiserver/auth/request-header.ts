/**
 * The front-proxy (requestheader) authenticator: kube-apiserver's aggregator forwards a request
 * with its own client certificate and names the end user in headers (X-Remote-User, X-Remote-Group,
 * X-Remote-Extra-*, X-Remote-Uid). The headers are believed only on a connection whose certificate
 * verifies against the requestheader CA and, when allowed names are configured, whose common name
 * is one of them; every other request has them removed before anything reads it.
 */
import type { IncomingMessage } from 'node:http';
import type { X509Certificate } from 'node:crypto';
import { authenticated, type UserInfo } from './user.js';
import type { ChainVerdict } from './x509-chain.js';

export interface RequestHeaderConfig {
  /** Roots the front proxy's client certificate must chain to. */
  clientCa: X509Certificate[];
  /** Common names the front proxy's certificate may carry; empty means any from the CA. */
  allowedNames: string[];
  usernameHeaders: string[];
  uidHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
}

/** What kube-apiserver sets when its flags leave them out. */
export const defaultRequestHeaderNames = {
  usernameHeaders: ['X-Remote-User'],
  uidHeaders: ['X-Remote-Uid'],
  groupHeaders: ['X-Remote-Group'],
  extraHeaderPrefixes: ['X-Remote-Extra-'],
};

export type RequestHeaderOutcome =
  /** A verified front proxy named this user. */
  | { user: UserInfo }
  /** The certificate did not verify (or its name is not allowed): recorded, and the next authenticator is tried. */
  | { error: string }
  /** Not a front-proxy request (no certificate from that CA, or no user header). */
  | undefined;

/** The connection's client certificate as the front-proxy check reads it. */
export interface PresentedCertificate {
  chain: readonly X509Certificate[];
  commonName: string;
  /** The chain checked against the requestheader CA. */
  verdict: ChainVerdict;
}

/**
 * The user a verified front proxy names, after which the identity headers are removed; on any other
 * connection (`certificate` undefined when none was presented) the headers are removed unread.
 */
export function authenticateRequestHeader(
  request: IncomingMessage,
  certificate: PresentedCertificate | undefined,
  config: RequestHeaderConfig,
): RequestHeaderOutcome {
  const verdict = certificate?.verdict;
  const commonName = certificate?.commonName ?? '';
  const trusted = verdict?.verified === true && (config.allowedNames.length === 0 || config.allowedNames.includes(commonName));
  const user = trusted ? userFromHeaders(request, config) : undefined;
  removeIdentityHeaders(request, config);
  if (user) return { user };
  if (certificate && !certificate.verdict.verified && chainNamesFrontProxy(certificate.chain, config)) return { error: certificate.verdict.reason };
  if (verdict?.verified && !trusted) return { error: `client certificate CN "${commonName}" is not among the allowed front-proxy names` };
  return undefined;
}

/** A failed chain counts as a front-proxy failure only when it claims to be issued by the front-proxy CA. */
function chainNamesFrontProxy(chain: readonly X509Certificate[], config: RequestHeaderConfig): boolean {
  const issuers = new Set(chain.map((certificate) => certificate.issuer));
  return config.clientCa.some((root) => issuers.has(root.subject));
}

function userFromHeaders(request: IncomingMessage, config: RequestHeaderConfig): UserInfo | undefined {
  const first = (names: string[]) => names.map((name) => headerValues(request, name)[0]).find((value) => value !== undefined && value !== '');
  const name = first(config.usernameHeaders);
  if (!name) return undefined;
  const groups = config.groupHeaders.flatMap((header) => headerValues(request, header));
  const extra: Record<string, string[]> = {};
  for (const [header, values] of Object.entries(request.headersDistinct)) {
    const prefix = config.extraHeaderPrefixes.find((candidate) => header.startsWith(candidate.toLowerCase()));
    if (!prefix || !values) continue;
    const key = safeDecode(header.slice(prefix.length)).toLowerCase();
    extra[key] = [...(extra[key] ?? []), ...values];
  }
  const user = authenticated(name, groups, first(config.uidHeaders));
  return Object.keys(extra).length > 0 ? { ...user, extra } : user;
}

/** Every value of a header, repeated headers kept apart (Node joins them with commas in `headers`). */
function headerValues(request: IncomingMessage, name: string): string[] {
  return request.headersDistinct[name.toLowerCase()] ?? [];
}

function removeIdentityHeaders(request: IncomingMessage, config: RequestHeaderConfig): void {
  const exact = [...config.usernameHeaders, ...config.uidHeaders, ...config.groupHeaders].map((name) => name.toLowerCase());
  const prefixes = config.extraHeaderPrefixes.map((prefix) => prefix.toLowerCase());
  for (const header of Object.keys(request.headers)) {
    if (exact.includes(header) || prefixes.some((prefix) => header.startsWith(prefix))) {
      delete request.headers[header];
      delete request.headersDistinct[header];
    }
  }
}

/** kube percent-decodes extra keys; a key that does not decode is kept as sent. */
function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
