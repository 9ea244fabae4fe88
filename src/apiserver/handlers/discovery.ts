/**
 * Discovery documents: legacy (/api, /api/v1, /apis, /apis/G, /apis/G/V) and
 * aggregated v2 of /api and /apis. The core group "" is served under /api
 * only, and only when some kind is in it; /api answers 404 otherwise.
 * The documents are pure functions of the registry, so they are built once.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIPv6 } from 'node:net';
import { errors } from '../errors.js';
import { negotiate } from '../http/negotiation.js';
import { sendJson } from '../http/respond.js';
import { groupVersionOf, statusVerbs, verbsOf, type GroupInfo, type Registry, type ServedResource } from '../registry/registry.js';

interface CachedDocument {
  body: string;
  etag: string;
}

type Root = 'api' | 'apis';

export class DiscoveryHandler {
  /** Aggregated documents by root and discovery version, e.g. "apis/v2". */
  private readonly aggregated = new Map<string, CachedDocument>();
  private readonly coreGroup: GroupInfo | undefined;
  private readonly namedGroups: GroupInfo[];

  constructor(private readonly registry: Registry) {
    const groups = registry.groups();
    this.coreGroup = groups.find((g) => g.name === '');
    this.namedGroups = groups.filter((g) => g.name !== '');
    for (const version of ['v2', 'v2beta1'] as const) {
      for (const [root, rootGroups] of [
        ['api', this.coreGroup ? [this.coreGroup] : []],
        ['apis', this.namedGroups],
      ] as const) {
        const body = JSON.stringify(this.aggregatedDocument(version, rootGroups));
        this.aggregated.set(`${root}/${version}`, { body, etag: `"${createHash('sha512').update(body).digest('hex')}"` });
      }
    }
  }

  /** Answers discovery paths; returns false for paths it does not own. */
  handle(request: IncomingMessage, response: ServerResponse, path: string): boolean {
    const parts = path.split('/').filter(Boolean);
    if (parts[0] === 'api' && parts.length <= 2) {
      if (!this.coreGroup) throw errors.pathNotFound();
      if (parts.length === 1) this.serveRoot(request, response, 'api');
      else this.serveGroupVersion(response, '', parts[1]);
      return true;
    }
    if (parts[0] !== 'apis' || parts.length > 3) return false;
    if (parts.length === 1) this.serveRoot(request, response, 'apis');
    else if (parts.length === 2) this.serveGroup(response, parts[1]);
    else this.serveGroupVersion(response, parts[1], parts[2]);
    return true;
  }

  private serveRoot(request: IncomingMessage, response: ServerResponse, root: Root): void {
    const { representation, contentType } = negotiate(request.headers.accept, ['plain', 'APIGroupDiscoveryList']);
    if (representation.kind === 'APIGroupDiscoveryList') {
      const document = this.aggregated.get(`${root}/${representation.version}`)!;
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
    if (root === 'api') {
      sendJson(response, 200, { kind: 'APIVersions', versions: this.coreGroup!.versions, serverAddressByClientCIDRs: [serverAddress(request)] });
      return;
    }
    sendJson(response, 200, { kind: 'APIGroupList', apiVersion: 'v1', groups: this.namedGroups.map(groupDocument) });
  }

  private serveGroup(response: ServerResponse, group: string): void {
    const info = this.namedGroups.find((g) => g.name === group);
    if (!info) throw errors.pathNotFound();
    sendJson(response, 200, { kind: 'APIGroup', apiVersion: 'v1', ...groupDocument(info) });
  }

  private serveGroupVersion(response: ServerResponse, group: string, version: string): void {
    const served = this.registry.resourcesIn(group, version);
    if (served.length === 0) throw errors.pathNotFound();
    sendJson(response, 200, {
      kind: 'APIResourceList',
      // kube leaves apiVersion out of the core group's list.
      ...(group === '' ? {} : { apiVersion: 'v1' }),
      groupVersion: groupVersionOf(group, version),
      resources: served.flatMap(apiResources),
    });
  }

  private aggregatedDocument(version: 'v2' | 'v2beta1', groups: readonly GroupInfo[]): unknown {
    return {
      kind: 'APIGroupDiscoveryList',
      apiVersion: `apidiscovery.k8s.io/${version}`,
      metadata: {},
      items: groups.map((group) => ({
        metadata: group.name === '' ? {} : { name: group.name },
        versions: group.versions.map((v) => ({
          version: v,
          freshness: 'Current',
          resources: this.registry.resourcesIn(group.name, v).map(discoveryResource),
        })),
      })),
    };
  }
}

/** Where clients reach this server: the address the request came in on, for every client network. */
function serverAddress(request: IncomingMessage): { clientCIDR: string; serverAddress: string } {
  const { localAddress = '', localPort } = request.socket;
  return { clientCIDR: '0.0.0.0/0', serverAddress: `${isIPv6(localAddress) ? `[${localAddress}]` : localAddress}:${localPort}` };
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
    resources.push({
      name: `${definition.plural}/status`,
      singularName: '',
      namespaced: definition.namespaced,
      kind: definition.kind,
      verbs: [...statusVerbs],
    });
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
