/**
 * A tiny kube-apiserver over real HTTPS with client-certificate
 * authentication, serving just what the Kubernetes source uses: namespaced
 * Secrets (get, list, watch), Cluster API discovery, and cluster-wide
 * Clusters and Machines (list, watch) with namespaced get. Lists and watches
 * follow kube's resourceVersion rules: watches replay history after the given
 * version and answer a compacted one with an ERROR event carrying 410.
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { renderKubeconfig } from '../../../src/apiserver/tls/kubeconfig.js';
import { ensurePki } from '../../../src/apiserver/tls/pki.js';
import type { JsonObject } from '../../../src/storage/interface.js';

export type Resource = 'secrets' | 'clusters' | 'machines';
type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

interface Event {
  revision: number;
  resource: Resource;
  type: EventType;
  object: JsonObject;
}

interface Watcher {
  resource: Resource;
  namespace: string | undefined;
  response: ServerResponse;
}

/** An answer with `status`, or (`hang`) none at all: the request is read and left waiting. */
interface Fault {
  pattern: RegExp;
  status: number;
  message: string;
  hang?: boolean;
}

const capiGroup = 'cluster.x-k8s.io';
const kinds: Record<Resource, string> = { secrets: 'Secret', clusters: 'Cluster', machines: 'Machine' };

export class FakeKubeApiServer {
  /** Every request, as "GET /path" with "?watch" appended for watches. */
  readonly requests: string[] = [];
  /** The query of every watch request, in order. */
  readonly watchQueries: URLSearchParams[] = [];
  private readonly objects = new Map<string, JsonObject>();
  private readonly history: Event[] = [];
  private readonly watchers = new Set<Watcher>();
  private faults: Fault[] = [];
  private revision = 1;
  private compactedRevision = 0;

  private constructor(
    private readonly server: https.Server,
    readonly kubeconfigPath: string,
    private readonly clusterApiVersions: readonly string[],
  ) {}

  /** Serves Cluster API in the given versions (none: Cluster API is not installed); writes dir/kubeconfig for user admin. */
  static async start(dir: string, clusterApiVersions: readonly string[]): Promise<FakeKubeApiServer> {
    const pki = await ensurePki(dir, { serverHosts: [] });
    const server = https.createServer({ cert: pki.serverCertPem, key: pki.serverKeyPem, ca: pki.caCertPem, requestCert: true, rejectUnauthorized: true });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const kubeconfigPath = path.join(dir, 'kubeconfig');
    await writeFile(
      kubeconfigPath,
      renderKubeconfig({ server: `https://127.0.0.1:${port}`, caCertPem: pki.caCertPem, clientCertPem: pki.adminCertPem, clientKeyPem: pki.adminKeyPem }),
    );
    const fake = new FakeKubeApiServer(server, kubeconfigPath, clusterApiVersions);
    server.on('request', (request: IncomingMessage, response: ServerResponse) => fake.serve(request, response));
    return fake;
  }

  /** Creates or replaces an object (metadata.namespace and name required), as the given apiVersion for Cluster API kinds. */
  put(resource: Resource, object: JsonObject): JsonObject {
    const metadata = object.metadata as JsonObject;
    const key = this.keyOf(resource, metadata.namespace as string, metadata.name as string);
    const existing = this.objects.get(key);
    const stored: JsonObject = {
      ...(resource === 'secrets' ? { apiVersion: 'v1', kind: 'Secret' } : {}),
      ...object,
      metadata: { uid: (existing?.metadata as JsonObject | undefined)?.uid ?? randomUUID(), ...metadata, resourceVersion: String(++this.revision) },
    };
    this.objects.set(key, stored);
    this.publish({ revision: this.revision, resource, type: existing ? 'MODIFIED' : 'ADDED', object: stored });
    return stored;
  }

  remove(resource: Resource, namespace: string, name: string): void {
    const key = this.keyOf(resource, namespace, name);
    const existing = this.objects.get(key);
    if (!existing) throw new Error(`${key} does not exist`);
    this.objects.delete(key);
    const last = { ...existing, metadata: { ...(existing.metadata as JsonObject), resourceVersion: String(++this.revision) } };
    this.publish({ revision: this.revision, resource, type: 'DELETED', object: last });
  }

  /** Drops the history: watches from any earlier resourceVersion get 410 Gone. */
  compact(): void {
    this.compactedRevision = this.revision;
    this.history.length = 0;
  }

  /** Ends every watch response, as kube-apiserver does at its request timeout. */
  endWatches(): void {
    for (const watcher of this.watchers) watcher.response.end();
    this.watchers.clear();
  }

  get openWatches(): number {
    return this.watchers.size;
  }

  /** Answers requests whose "METHOD /path[?watch]" matches with status until cleared. */
  fail(pattern: RegExp, status: number, message: string): void {
    this.faults.push({ pattern, status, message });
  }

  /** Leaves requests whose "METHOD /path[?watch]" matches unanswered until cleared or stopped. */
  hang(pattern: RegExp): void {
    this.faults.push({ pattern, status: 0, message: '', hang: true });
  }

  clearFaults(): void {
    this.faults = [];
  }

  count(request: string): number {
    return this.requests.filter((logged) => logged === request).length;
  }

  async stop(): Promise<void> {
    this.endWatches();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private keyOf(resource: Resource, namespace: string, name: string): string {
    return `${resource}/${namespace}/${name}`;
  }

  private publish(event: Event): void {
    this.history.push(event);
    for (const watcher of this.watchers) if (this.matches(watcher, event)) this.send(watcher.response, event);
  }

  private matches(watcher: Watcher, event: Event): boolean {
    const namespace = (event.object.metadata as JsonObject).namespace;
    return watcher.resource === event.resource && (watcher.namespace === undefined || watcher.namespace === namespace);
  }

  private send(response: ServerResponse, event: Event): void {
    response.write(`${JSON.stringify({ type: event.type, object: event.object })}\n`);
  }

  private serve(request: IncomingMessage, response: ServerResponse): void {
    const url = new URL(request.url ?? '/', 'https://fake');
    const watch = url.searchParams.get('watch') === 'true';
    const logged = `${request.method} ${url.pathname}${watch ? '?watch' : ''}`;
    this.requests.push(logged);
    if (watch) this.watchQueries.push(url.searchParams);
    const fault = this.faults.find((candidate) => candidate.pattern.test(logged));
    if (fault?.hang) return;
    if (fault) return status(response, fault.status, fault.message);
    if (request.method !== 'GET') return status(response, 405, `the server does not allow this method on the requested resource`);

    const secret = /^\/api\/v1\/namespaces\/([^/]+)\/secrets(?:\/([^/]+))?$/.exec(url.pathname);
    if (secret) return this.route(response, 'secrets', 'v1', secret[1], secret[2], watch, url);
    const capi = /^\/apis\/cluster\.x-k8s\.io\/([^/]+)(?:\/namespaces\/([^/]+))?(?:\/(clusters|machines))?(?:\/([^/]+))?$/.exec(url.pathname);
    if (capi && this.clusterApiVersions.includes(capi[1])) {
      const [, version, namespace, resource, name] = capi;
      if (!resource && !namespace) return json(response, 200, this.discovery(version));
      if (resource) return this.route(response, resource as Resource, `${capiGroup}/${version}`, namespace, name, watch, url);
    }
    status(response, 404, 'the server could not find the requested resource');
  }

  private route(
    response: ServerResponse,
    resource: Resource,
    apiVersion: string,
    namespace: string | undefined,
    name: string | undefined,
    watch: boolean,
    url: URL,
  ): void {
    if (name !== undefined) {
      if (namespace === undefined) return status(response, 404, 'the server could not find the requested resource');
      const object = this.objects.get(this.keyOf(resource, namespace, name));
      if (!object) return status(response, 404, `${resource}${resource === 'secrets' ? '' : `.${capiGroup}`} "${name}" not found`, { name, kind: resource });
      return json(response, 200, object);
    }
    if (watch) return this.watch(response, resource, namespace, url.searchParams.get('resourceVersion') ?? '');
    const items = [...this.objects.entries()]
      .filter(([key]) => key.startsWith(`${resource}/${namespace === undefined ? '' : `${namespace}/`}`))
      .map(([, object]) => {
        // Core lists carry no apiVersion and kind per item; custom resource lists do.
        if (resource !== 'secrets') return object;
        const { apiVersion: _apiVersion, kind: _kind, ...rest } = object;
        return rest;
      });
    json(response, 200, { apiVersion, kind: `${kinds[resource]}List`, metadata: { resourceVersion: String(this.revision) }, items });
  }

  private watch(response: ServerResponse, resource: Resource, namespace: string | undefined, resourceVersion: string): void {
    response.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    response.flushHeaders();
    const after = Number(resourceVersion);
    if (!Number.isInteger(after) || after < this.compactedRevision) {
      const gone = {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `too old resource version: ${resourceVersion} (${this.compactedRevision})`,
        reason: 'Expired',
        code: 410,
      };
      response.end(`${JSON.stringify({ type: 'ERROR', object: gone })}\n`);
      return;
    }
    const watcher: Watcher = { resource, namespace, response };
    for (const event of this.history) if (event.revision > after && this.matches(watcher, event)) this.send(response, event);
    this.watchers.add(watcher);
    response.on('close', () => this.watchers.delete(watcher));
  }

  private discovery(version: string): JsonObject {
    const resource = (name: string, kind: string) => ({ name, singularName: kind.toLowerCase(), namespaced: true, kind, verbs: ['get', 'list', 'watch'] });
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: `${capiGroup}/${version}`,
      resources: [resource('clusters', 'Cluster'), resource('machines', 'Machine')],
    };
  }
}

function json(response: ServerResponse, code: number, body: unknown): void {
  response.writeHead(code, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

function status(response: ServerResponse, code: number, message: string, details?: JsonObject): void {
  const reasons: Record<number, string> = { 403: 'Forbidden', 404: 'NotFound', 405: 'MethodNotAllowed', 500: 'InternalError' };
  json(response, code, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: reasons[code] ?? 'Unknown',
    ...(details && { details }),
    code,
  });
}
