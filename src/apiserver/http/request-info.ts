/**
 * What a request addresses, derived from its path and method the way
 * kube-apiserver's RequestInfoFactory does: authorization, metrics and
 * routing all read this one parse.
 */
import type { NonResourceAttributes, ResourceAttributes } from '../auth/authorizer.js';

/** A request for a resource: what authorization needs, plus the raw path. */
export interface ResourceRequestInfo extends ResourceAttributes {
  kind: 'resource';
  path: string;
}

export interface NonResourceRequestInfo extends NonResourceAttributes {
  kind: 'nonResource';
}

export type RequestInfo = ResourceRequestInfo | NonResourceRequestInfo;

export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const httpVerb = method.toLowerCase();
  const parts = path.split('/').filter((p) => p !== '');
  // /apis/{group}/{version}/{resource...} and, for the legacy core group "", /api/{version}/{resource...};
  // the shorter paths (/apis, /apis/{group}, /api/{version}, ...) are discovery.
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'apis' && parts.length >= 4) {
    [group, version, rest] = [parts[1], parts[2], parts.slice(3)];
  } else if (parts[0] === 'api' && parts.length >= 3) {
    [group, version, rest] = ['', parts[1], parts.slice(2)];
  } else {
    return { kind: 'nonResource', verb: httpVerb, path };
  }
  let namespace: string | undefined;
  let remaining = rest;
  // "namespaces/{ns}/{resource}" addresses a namespaced resource; a lone
  // "namespaces/{name}" would be the namespace object itself, which we do not serve.
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    remaining = rest.slice(2);
  }
  const [resource, name, subresource, ...extra] = remaining.map(decodeURIComponent);
  const info: ResourceRequestInfo = { kind: 'resource', verb: '', group, version, resource, path };
  if (namespace !== undefined) info.namespace = decodeURIComponent(namespace);
  if (name !== undefined) info.name = name;
  if (subresource !== undefined) info.subresource = extra.length ? [subresource, ...extra].join('/') : subresource;
  info.verb = resourceVerb(httpVerb, info.name !== undefined, query);
  return info;
}

function resourceVerb(httpVerb: string, hasName: boolean, query: URLSearchParams): string {
  switch (httpVerb) {
    case 'post':
      return 'create';
    case 'get':
    case 'head': {
      if (!hasName) {
        const watch = query.get('watch');
        return watch === 'true' || watch === '1' ? 'watch' : 'list';
      }
      return 'get';
    }
    case 'put':
      return 'update';
    case 'patch':
      return 'patch';
    case 'delete':
      return hasName ? 'delete' : 'deletecollection';
    default:
      return httpVerb;
  }
}
