/**
 * Who a request comes from, tried in kube-apiserver's order: a client
 * certificate that verifies against our CA, then a bearer token, then
 * system:anonymous (which the authorizers deny, so it ends as 401).
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { errors } from '../errors.js';
import { identityFromCertificate } from '../tls/pki.js';
import { anonymousUser, authenticated, type UserInfo } from './user.js';

export interface TokenAuthenticator {
  /** The user a bearer token belongs to, or undefined when the token is unknown. */
  authenticateToken(token: string): Promise<UserInfo | undefined>;
}

/** Resolves to the request's user; rejects with a 401 Status for credentials that do not verify. */
export type RequestAuthenticator = (request: IncomingMessage) => Promise<UserInfo>;

/** Without `tokens`, bearer tokens are ignored, as kube-apiserver ignores them with no token authenticator configured. */
export function createRequestAuthenticator(tokens?: TokenAuthenticator): RequestAuthenticator {
  return async (request) => {
    const socket = request.socket as TLSSocket;
    const certificate = certificateUser(socket);
    if (certificate !== 'unverified' && certificate !== undefined) return certificate;
    const token = bearerToken(request.headers.authorization);
    if (tokens && token !== undefined) {
      const user = await tokens.authenticateToken(token);
      if (!user) throw errors.unauthorized();
      return user;
    }
    if (certificate === 'unverified') throw errors.unauthorized();
    return anonymousUser;
  };
}

/** A TLS connection's client certificate cannot change, and decoding it is costly, so it is read once per connection. */
const certificateUsers = new WeakMap<TLSSocket, UserInfo>();

function certificateUser(socket: TLSSocket): UserInfo | 'unverified' | undefined {
  const known = certificateUsers.get(socket);
  if (known) return known;
  const peer = socket.getPeerCertificate?.();
  if (!peer || Object.keys(peer).length === 0) return undefined;
  if (!socket.authorized) return 'unverified';
  const identity = identityFromCertificate(peer);
  const user = authenticated(identity.user, identity.groups);
  certificateUsers.set(socket, user);
  return user;
}

/** `Authorization: Bearer <token>`, read as kube does: scheme case-insensitive, anything else means no token. */
function bearerToken(header: string | undefined): string | undefined {
  const [scheme, token] = (header ?? '').trim().split(' ');
  if (scheme?.toLowerCase() !== 'bearer' || !token) return undefined;
  return token;
}
