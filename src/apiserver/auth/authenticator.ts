/**
 * Who a request comes from, tried in kube-apiserver's order, first success winning:
 * 1. a front proxy (kube-apiserver's aggregator) whose certificate verifies against the
 *    requestheader CA names the user in X-Remote-* headers (request-header.ts);
 * 2. a client certificate that verifies against the client CA names the user (CN) and groups (O);
 * 3. a bearer token, through the token authenticator (a token file, or TokenReview);
 * then system:anonymous, which the authorizers deny. A credential that was presented and failed,
 * with nothing succeeding after it, is a 401.
 *
 * The CAs come from an AuthenticationConfig and may change while the server runs (kube-apiserver
 * rotates them in its extension-apiserver-authentication ConfigMap), so each chain is verified here
 * against the CA in force rather than by the TLS handshake.
 */
import type { X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import type { TLSSocket } from 'node:tls';
import { errors } from '../errors.js';
import { identityFromCertificate } from '../tls/pki.js';
import { authenticateRequestHeader, type RequestHeaderConfig } from './request-header.js';
import { anonymousUser, authenticated, type UserInfo } from './user.js';
import { parsePemBundle, presentedChain, verifyClientChain, type ChainVerdict } from './x509-chain.js';

export interface TokenAuthenticator {
  /** The user a bearer token belongs to, or undefined when the token is unknown; rejects when it cannot tell. */
  authenticateToken(token: string): Promise<UserInfo | undefined>;
  /**
   * The user of the token whose SHA-256 (of its UTF-8, in hex) is given, for a holder that kept only
   * the digest (a dashboard session). Offered by authenticators that keep their tokens by digest.
   */
  userOfTokenDigest?(digest: string): UserInfo | undefined;
}

/** The certificate authorities in force, and what the TLS handshake offers to clients. */
export interface CertificateAuthorities {
  /** Client certificates from these roots name a user directly. */
  clientCa: X509Certificate[];
  /** Requests through kube-apiserver's aggregator; absent when the server is not behind one. */
  requestHeader?: RequestHeaderConfig;
}

export interface AuthenticationConfig {
  current(): CertificateAuthorities;
  /** Calls `listener` after the authorities change, so the TLS handshake can offer the new ones. */
  onChange?(listener: () => void): void;
  /** Without it bearer tokens are ignored, as kube-apiserver ignores them with no token authenticator. */
  tokens?: TokenAuthenticator;
}

/** Fixed authorities: the embedded server's own CA, and its token file when there is one. */
export function staticAuthentication(clientCaPem: string, tokens?: TokenAuthenticator): AuthenticationConfig {
  const authorities: CertificateAuthorities = { clientCa: parsePemBundle(clientCaPem) };
  return { current: () => authorities, tokens };
}

/** Every root a client certificate may chain to, as PEM: the CA list the TLS handshake sends. */
export function acceptedCaPem(authorities: CertificateAuthorities): string {
  const roots = [...authorities.clientCa, ...(authorities.requestHeader?.clientCa ?? [])];
  return [...new Set(roots.map((root) => root.toString()))].join('\n');
}

/** Resolves to the request's user; rejects with a 401 Status for credentials that do not verify. */
export type RequestAuthenticator = (request: IncomingMessage) => Promise<UserInfo>;

export function createRequestAuthenticator(config: AuthenticationConfig): RequestAuthenticator {
  return async (request) => {
    const authorities = config.current();
    const presented = presentedCertificate(request);
    const failures: string[] = [];

    const frontProxy = authorities.requestHeader;
    if (frontProxy) {
      const certificate = presented && { ...presented, verdict: presented.verify(frontProxy.clientCa) };
      const outcome = authenticateRequestHeader(request, certificate, frontProxy);
      if (outcome && 'user' in outcome) return outcome.user;
      if (outcome) failures.push(outcome.error);
    }
    if (presented) {
      const verdict = presented.verify(authorities.clientCa);
      if (verdict.verified) return authenticated(presented.identity.user, presented.identity.groups);
      // The front proxy's own certificate, sent without user headers, is not a failed client certificate.
      if (!frontProxy || !presented.verify(frontProxy.clientCa).verified) failures.push(verdict.reason);
    }
    const token = bearerToken(request.headers.authorization);
    if (config.tokens && token !== undefined) {
      const user = await config.tokens.authenticateToken(token).catch(() => undefined);
      if (user) return user;
      failures.push('invalid bearer token');
    }
    if (failures.length > 0) throw errors.unauthorized();
    return anonymousUser;
  };
}

interface Presented {
  chain: X509Certificate[];
  commonName: string;
  identity: { user: string; groups: string[] };
  /** The chain checked against a set of roots, remembered per set. */
  verify(roots: X509Certificate[]): ChainVerdict;
}

/**
 * A TLS connection's client certificate cannot change, and parsing and verifying it is costly, so
 * both are done once per connection (per set of roots, which change only when the CAs rotate). A
 * verdict holds only while every certificate it looked at is within its validity: kube-apiserver
 * verifies each request at the time it comes, so a certificate that expires while its connection
 * stays open (HTTP/2 keeps one for hours) stops authenticating from that moment.
 */
const presentedCertificates = new WeakMap<object, Presented | null>();

/**
 * The TLS connection a request came on, and what identifies it for as long as it lives. An HTTP/2
 * request's `socket` is a proxy made for its stream, a new one per request, so the connection is
 * known by its session there.
 */
function connectionOf(request: IncomingMessage | Http2ServerRequest): { key: object; socket: TLSSocket } {
  // A stream already reset by its client has no session left; its own socket proxy still answers.
  const session = 'stream' in request ? request.stream.session : undefined;
  if (session) return { key: session, socket: session.socket as TLSSocket };
  return { key: request.socket, socket: request.socket as TLSSocket };
}

function presentedCertificate(request: IncomingMessage): Presented | undefined {
  const { key, socket } = connectionOf(request);
  const known = presentedCertificates.get(key);
  if (known !== undefined) return known ?? undefined;
  const chain = presentedChain(socket);
  if (chain.length === 0) {
    presentedCertificates.set(key, null);
    return undefined;
  }
  const identity = identityFromCertificate(socket.getPeerCertificate());
  const verdicts = new WeakMap<X509Certificate[], { verdict: ChainVerdict; from: number; to: number }>();
  const presented: Presented = {
    chain,
    commonName: identity.user,
    identity,
    verify: (roots) => {
      const now = Date.now();
      const remembered = verdicts.get(roots);
      if (remembered && now >= remembered.from && now <= remembered.to) return remembered.verdict;
      const involved = [...chain, ...roots];
      const from = Math.max(...involved.map((certificate) => certificate.validFromDate.getTime()));
      const to = Math.min(...involved.map((certificate) => certificate.validToDate.getTime()));
      const verdict = verifyClientChain(chain, roots, new Date(now));
      // A verdict reached outside that window (expired, not yet valid) is not remembered: time changes it.
      if (now >= from && now <= to) verdicts.set(roots, { verdict, from, to });
      return verdict;
    },
  };
  presentedCertificates.set(key, presented);
  return presented;
}

/** `Authorization: Bearer <token>`, read as kube does: scheme case-insensitive, anything else means no token. */
function bearerToken(header: string | undefined): string | undefined {
  const [scheme, token] = (header ?? '').trim().split(' ');
  if (scheme?.toLowerCase() !== 'bearer' || !token) return undefined;
  return token;
}
