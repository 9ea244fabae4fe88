/**
 * Who is making a request. Every request carries one, so authorization,
 * audit and managedFields defaults never guess; delegated authentication
 * (front-proxy headers, TokenReview) will produce the same shape.
 */
export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export const anonymousUser: UserInfo = Object.freeze({
  name: 'system:anonymous',
  groups: ['system:unauthenticated'],
}) as UserInfo;

/** kube adds system:authenticated to every authenticated user lacking it. */
export function authenticated(name: string, groups: string[], uid?: string): UserInfo {
  return { name, ...(uid ? { uid } : {}), groups: groups.includes('system:authenticated') ? groups : [...groups, 'system:authenticated'] };
}
