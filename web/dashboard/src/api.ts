/**
 * Calls to /dashboard/api with the session cookie, the CSRF token on every
 * mutating call, and a Kubernetes Status turned into an Error that says it.
 */

export type { ClusterPageData as ClusterDetail, ClusterSummary, EventView, TimelineSpan, TreeNode } from '../../../src/dashboard/view-types';

export interface SessionInfo {
  user: { name: string; groups: string[] };
  csrfToken: string;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

let csrfToken = '';

export function rememberSession(session: SessionInfo): void {
  csrfToken = session.csrfToken;
}

/**
 * Where the dashboard is mounted: /dashboard, or kube-apiserver's path to it through `kubectl proxy`
 * (/apis/extensions.capo-apiserver.io/v1alpha1/dashboard). Pages and API calls are below it.
 */
export const dashboardRoot = /^(.*?\/dashboard)(\/|$)/.exec(location.pathname)?.[1] ?? '/dashboard';
export const apiBase = `${dashboardRoot}/api`;

export async function call<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (method !== 'GET') headers['X-CSRF-Token'] = csrfToken;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(`${apiBase}${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  const parsed = text === '' ? undefined : (JSON.parse(text) as unknown);
  if (!response.ok) {
    const message = (parsed as { message?: string } | undefined)?.message ?? `${response.status} ${response.statusText}`;
    throw new ApiError(response.status, message);
  }
  return parsed as T;
}

export function clusterPath(namespace: string, name: string): string {
  return `/namespaces/${encodeURIComponent(namespace)}/clusters/${encodeURIComponent(name)}`;
}
