/**
 * An API server serving the CAPO kinds with the inventory routes mounted
 * through extraRoutes, bearer tokens and a policy file as the embedded
 * default wires them, and a storage wrapper that counts the reads the
 * inventory routes make. Objects are written through the Kubernetes API,
 * status included, as the reconciler writes them.
 */
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { AbacAuthorizer, type AbacPolicy } from '../src/apiserver/auth/abac.js';
import { LocalAuthorizer, UnionAuthorizer } from '../src/apiserver/auth/authorizer.js';
import { ensureLocalAuthFiles } from '../src/apiserver/auth/local-auth-files.js';
import { StaticTokenFile } from '../src/apiserver/auth/token-file.js';
import { Registry } from '../src/apiserver/registry/registry.js';
import { startApiServer, type RunningApiServer } from '../src/apiserver/server.js';
import { ensurePki, type Pki } from '../src/apiserver/tls/pki.js';
import { servedKinds } from '../src/served-kinds.js';
import type { AdminHooks } from '../src/admin/router.js';
import { inventoryRoutes, type InventoryRoutesDeps } from '../src/inventory-routes.js';
import type { QueryLimits } from '../src/graphql/limits.js';
import { HealthChecks } from '../src/observability/health.js';
import { MetricsRegistry } from '../src/observability/metrics.js';
import type { JsonObject, ListRequest, Storage } from '../src/storage/interface.js';
import { SqliteStorage } from '../src/storage/sqlite.js';
import { Stores } from '../src/apiserver/store/stores.js';
import { staticAuthentication } from '../src/apiserver/auth/authenticator.js';

/** Users of the fixture server, by token. */
export const tokens = {
  /** May list OpenStackClusters in team-a, nothing else. */
  alice: 'alice-token',
  /** May do anything in team-a, reading Secrets included. */
  bob: 'bob-token',
  /** May list OpenStackClusters in team-b. */
  carol: 'carol-token',
  /** Authenticated, but granted nothing. */
  dave: 'dave-token',
  /** May read team-a's inventory (clusters, machines, servers, nodes, ClusterExtensions) but not its Secrets, and list OpenStackClusters in team-b. */
  erin: 'erin-token',
} as const;

/** Read-only access to every kind an inventory is made of, in one namespace. */
const inventoryReader = (user: string, namespace: string): AbacPolicy[] =>
  [
    ['infrastructure.cluster.x-k8s.io', 'openstackclusters'],
    ['infrastructure.cluster.x-k8s.io', 'openstackmachines'],
    ['infrastructure.cluster.x-k8s.io', 'openstackservers'],
    ['extensions.capo-apiserver.io', 'openstacknodes'],
    ['extensions.capo-apiserver.io', 'clusterextensions'],
  ].map(([apiGroup, resource]) => ({ user, namespace, resource, apiGroup, readonly: true }));

const policies: AbacPolicy[] = [
  { user: 'alice', namespace: 'team-a', resource: 'openstackclusters', apiGroup: 'infrastructure.cluster.x-k8s.io', readonly: true },
  { user: 'bob', namespace: 'team-a', resource: '*', apiGroup: '*' },
  { user: 'carol', namespace: 'team-b', resource: 'openstackclusters', apiGroup: 'infrastructure.cluster.x-k8s.io', readonly: true },
  ...inventoryReader('erin', 'team-a'),
  { user: 'erin', namespace: 'team-b', resource: 'openstackclusters', apiGroup: 'infrastructure.cluster.x-k8s.io', readonly: true },
];

/** Counts the reads that reach storage, to show they do not grow with hosts. */
export class CountingStorage implements Storage {
  reads = 0;

  constructor(private readonly inner: Storage) {}

  currentRevision() {
    this.reads++;
    return this.inner.currentRevision();
  }
  compactedRevision() {
    this.reads++;
    return this.inner.compactedRevision();
  }
  get(key: string) {
    this.reads++;
    return this.inner.get(key);
  }
  list(prefix: string, request?: ListRequest) {
    this.reads++;
    return this.inner.list(prefix, request);
  }
  create(key: string, value: JsonObject) {
    return this.inner.create(key, value);
  }
  update(key: string, value: JsonObject, expected: number) {
    return this.inner.update(key, value, expected);
  }
  delete(key: string, expected?: number) {
    return this.inner.delete(key, expected);
  }
  watch(...args: Parameters<Storage['watch']>) {
    return this.inner.watch(...args);
  }
  peek(key: string) {
    return this.inner.peek(key);
  }
  cachedRevision() {
    return this.inner.cachedRevision();
  }
  reachCachedRevision(revision: number, timeoutMs: number) {
    return this.inner.reachCachedRevision(revision, timeoutMs);
  }
  getConsistent(key: string) {
    this.reads++;
    return this.inner.getConsistent(key);
  }
  check() {
    return this.inner.check();
  }
  close() {
    return this.inner.close();
  }
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

export interface InventoryServer {
  url: string;
  dataDir: string;
  caPath: string;
  adminToken: string;
  /** The reads the inventory routes made; set to 0 before a request to count its reads. */
  storage: CountingStorage;
  pki: Pki;
  request(
    method: string,
    urlPath: string,
    options?: { token?: string; certificate?: boolean; headers?: Record<string, string>; body?: unknown },
  ): Promise<HttpAnswer>;
  graphql(
    query: string,
    variables?: Record<string, unknown>,
    options?: { token?: string; certificate?: boolean; headers?: Record<string, string> },
  ): Promise<HttpAnswer>;
  /** Creates the object through the API, then writes its status through the status subresource. */
  create(object: JsonObject): Promise<void>;
  /** Rewrites the token file without the token's line, as an operator revokes it, and waits until the server reads it so. */
  revokeToken(token: string): Promise<void>;
  close(): Promise<void>;
}

export async function startInventoryServer(
  options: { admin?: AdminHooks; limits?: QueryLimits; dashboard?: InventoryRoutesDeps['dashboard'] } = {},
): Promise<InventoryServer> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'capo-graphql-'));
  const pki = await ensurePki(dataDir, { serverHosts: ['127.0.0.1'] });
  const files = await ensureLocalAuthFiles(dataDir);
  const adminToken = await readFile(files.adminTokenFile, 'utf8');
  await appendFile(
    files.tokenFile,
    Object.entries(tokens)
      .map(([user, token]) => `${token},${user},uid-${user}\n`)
      .join(''),
  );
  await appendFile(
    files.policyFile,
    policies.map((spec) => `${JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec })}\n`).join(''),
  );
  const tokenFile = await StaticTokenFile.open(files.tokenFile);
  const policyFile = await AbacAuthorizer.open(files.policyFile);
  const sqlite = SqliteStorage.open(path.join(dataDir, 'capo.db'));
  const storage = new CountingStorage(sqlite);
  const server: RunningApiServer = await startApiServer({
    host: '127.0.0.1',
    port: 0,
    tls: { key: pki.serverKeyPem, cert: pki.serverCertPem },
    authentication: staticAuthentication(pki.caCertPem, tokenFile),
    registry: new Registry(servedKinds),
    stores: new Stores(servedKinds, sqlite),
    authorizer: new UnionAuthorizer([new LocalAuthorizer(), policyFile]),
    metrics: new MetricsRegistry(),
    health: new HealthChecks(),
    extraRoutes: (app, auth) =>
      inventoryRoutes({ storage, ...auth, admin: options.admin, limits: options.limits, dashboard: { tokens: tokenFile, ...options.dashboard } })(app),
  });

  const request: InventoryServer['request'] = (method, urlPath, { token, certificate, headers, body } = {}) => {
    const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = https.request(
        `${server.url}${urlPath}`,
        {
          method,
          ca: pki.caCertPem,
          ...(certificate ? { cert: pki.adminCertPem, key: pki.adminKeyPem } : {}),
          headers: {
            ...(token ? { Authorization: `Bearer ${token}` } : {}),
            ...(text !== undefined ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)) } : {}),
            ...headers,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk) => chunks.push(chunk));
          res.on('end', () => {
            const raw = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = raw;
            try {
              parsed = JSON.parse(raw);
            } catch {
              // Not JSON: the test sees the text.
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
          });
        },
      );
      req.on('error', reject);
      req.end(text);
    });
  };

  const create: InventoryServer['create'] = async (object) => {
    const { status, metadata, ...rest } = object as { status?: JsonObject; metadata: Record<string, unknown> } & JsonObject;
    const { resourceVersion: _rv, uid: _uid, creationTimestamp: _created, ...meta } = metadata;
    const [group, version] = String(object.apiVersion).split('/');
    const collection = `/apis/${group}/${version}/namespaces/${meta.namespace}/${String(object.kind).toLowerCase()}s`;
    const created = await request('POST', collection, { token: adminToken, body: { ...rest, metadata: meta } });
    if (created.status !== 201) throw new Error(`creating ${object.kind} ${meta.name}: ${created.status} ${JSON.stringify(created.body)}`);
    if (!status) return;
    const patched = await request('PATCH', `${collection}/${meta.name}/status`, {
      token: adminToken,
      headers: { 'Content-Type': 'application/merge-patch+json' },
      body: { status },
    });
    if (patched.status !== 200) throw new Error(`writing the status of ${object.kind} ${meta.name}: ${patched.status} ${JSON.stringify(patched.body)}`);
  };

  return {
    url: server.url,
    dataDir,
    caPath: path.join(dataDir, 'pki', 'ca.crt'),
    adminToken,
    storage,
    pki,
    request,
    graphql: (query, variables = {}, options = {}) => request('POST', '/graphql', { ...options, body: { query, variables } }),
    create,
    async revokeToken(token) {
      const lines = (await readFile(files.tokenFile, 'utf8')).split('\n');
      await writeFile(files.tokenFile, lines.filter((line) => !line.startsWith(`${token},`)).join('\n'));
      await tokenFile.reload();
    },
    async close() {
      await server.close();
      tokenFile.close();
      policyFile.close();
      await sqlite.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
