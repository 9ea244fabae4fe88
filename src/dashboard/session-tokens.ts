/**
 * What a dashboard session remembers of the bearer token it was made with, so that the session ends
 * as soon as the token no longer names its user (removed from the token file, or refused by the
 * management cluster's TokenReview). Where the token authenticator keeps tokens by their SHA-256
 * (the token file), the session keeps only that digest; a TokenReview can only be asked about the
 * token itself, so there the session keeps the token, in this process's memory only (its answers are
 * cached for ten seconds, so a session's calls cost one review per ten seconds).
 */
import { createHash } from 'node:crypto';
import type { TokenAuthenticator } from '../apiserver/auth/authenticator.js';
import type { UserInfo } from '../apiserver/auth/user.js';

export type TokenReference = { readonly digest: string } | { readonly token: string };

export function referenceTo(token: string, tokens: TokenAuthenticator): TokenReference {
  return tokens.userOfTokenDigest ? { digest: createHash('sha256').update(token, 'utf8').digest('hex') } : { token };
}

/** The user the token names now, if it is still the session's user (groups may have changed); rejects when that cannot be told now. */
export async function currentUserOf(reference: TokenReference, sessionUser: UserInfo, tokens: TokenAuthenticator): Promise<UserInfo | undefined> {
  const user = 'digest' in reference ? tokens.userOfTokenDigest?.(reference.digest) : await tokens.authenticateToken(reference.token);
  return user && user.name === sessionUser.name && user.uid === sessionUser.uid ? user : undefined;
}
