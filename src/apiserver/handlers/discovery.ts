/**
 * Discovery documents: legacy (/apis, /apis/G, /apis/G/V) and aggregated v2.
 * They are pure functions of the registry, so they are built once.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errors } from '../errors.js';
import { negotiate } from '../http/negotiation.js';
import { sendJson } from '../http/respond.js';
import { statusVerbs, verbsOf, type Registry, type ServedResource } from '../registry/registry.js';

interface CachedDocument {
  body: string;
  etag: string;
}

export class DiscoveryHandler {
  private readonly aggregated = new Map<string, CachedDocument>();

  constructor(private readonly registry: Registry) {
    for (const version of ['v2', 'v2beta1'] as const) {
      const body = JSON.stringify(this.aggregatedDocument(version));
      this.aggregated.set(version, { body, etag: `"${createHash('sha512').update(body).digest('hex')}"` });
    }
  }

  /** Answers discovery paths; returns false for paths it does not own. */
  handle(request: IncomingMessage, response: ServerResponse, path: string): boolean {
    const parts = path.split('/').filter(Boolean);
    if (parts[0] === 'api' && parts.length === 1) throw errors.pathNotFound();
    if (parts[0] !== 'apis' || parts.length > 3) return false;
    if (parts.length === 1) this.serveRoot(request, response);
    else if (parts.length === 2) this.serveGroup(response, parts[1]);
    else this.serveGroupVersion(response, parts[1], parts[2]);
    return true;
  }

  private serveRoot(request: IncomingMessage, response: ServerResponse): void {
    const { representation, contentType } = negotiate(request.headers.accept, ['plain', 'APIGroupDiscoveryList']);
    if (representation.kind === 'APIGroupDiscoveryList') {
      const document = this.aggregated.get(representation.version)!;
      response.setHeader('ETag', document.etag);
      response.setHeader('Vary', 'Accept');
      response.setHeader('Cache-Control', 'public');
      if (request.headers['if-none-match'] === document.etag) {
        response.writeHead(304);
        response.end();
        return;
      }
      response.writeHead(200, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(document.body) });
      response.end(document.body);
      return;
    }
    sendJson(response, 200, { kind: 'APIGroupList', apiVersion: 'v1', groups: this.registry.groups().map(groupDocument) });
  }

  private serveGroup(response: ServerResponse, group: string): void {
    const info = this.registry.groups().find((g) => g.name === group);
    if (!info) throw errors.pathNotFound();
    sendJson(response, 200, { kind: 'APIGroup', apiVersion: 'v1', ...groupDocument(info) });
  }

  private serveGroupVersion(response: ServerResponse, group: string, version: string): void {
    const served = this.registry.resourcesIn(group, version);
    if (served.length === 0) throw errors.pathNotFound();
    sendJson(response, 200, {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: `${group}/${version}`,
      resources: served.flatMap(apiResources),
    });
  }

  private aggregatedDocument(version: 'v2' | 'v2beta1'): unknown {
    return {
      kind: 'APIGroupDiscoveryList',
      apiVersion: `apidiscovery.k8s.io/${version}`,
      metadata: {},
      items: this.registry.groups().map((group) => ({
        metadata: { name: group.name },
        versions: group.versions.map((v) => ({
          version: v,
          freshness: 'Current',
          resources: this.registry.resourcesIn(group.name, v).map(discoveryResource),
        })),
      })),
    };
  }
}

function groupDocument(group: { name: string; versions: string[] }) {
  const versions = group.versions.map((v) => ({ groupVersion: `${group.name}/${v}`, version: v }));
  return { name: group.name, versions, preferredVersion: versions[0] };
}

function apiResources({ definition }: ServedResource): unknown[] {
  const main: Record<string, unknown> = {
    name: definition.plural,
    singularName: definition.singular,
    namespaced: definition.namespaced,
    kind: definition.kind,
    verbs: verbsOf(definition),
  };
  if (definition.shortNames?.length) main.shortNames = definition.shortNames;
  if (definition.categories?.length) main.categories = definition.categories;
  const resources = [main];
  if (definition.subresources.status) {
    resources.push({ name: `${definition.plural}/status`, singularName: '', namespaced: definition.namespaced, kind: definition.kind, verbs: [...statusVerbs] });
  }
  return resources;
}

function discoveryResource({ definition, version }: ServedResource): unknown {
  const responseKind = { group: definition.group, version: version.name, kind: definition.kind };
  const resource: Record<string, unknown> = {
    resource: definition.plural,
    responseKind,
    scope: definition.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: definition.singular,
    verbs: verbsOf(definition),
  };
  if (definition.shortNames?.length) resource.shortNames = definition.shortNames;
  if (definition.categories?.length) resource.categories = definition.categories;
  if (definition.subresources.status) resource.subresources = [{ subresource: 'status', responseKind, verbs: [...statusVerbs] }];
  return resource;
}
