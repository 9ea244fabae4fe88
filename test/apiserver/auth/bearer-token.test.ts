/**
 * Bearer tokens and per-namespace policies as kubectl sees them: the real
 * kubectl against the API server with the token file and the policy file
 * chained after LocalAuthorizer, as the embedded default wires them.
 */
import { execFile } from 'node:child_process';
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbacAuthorizer } from '../../../src/apiserver/auth/abac.js';
import { LocalAuthorizer, UnionAuthorizer } from '../../../src/apiserver/auth/authorizer.js';
import { ensureLocalAuthFiles, type LocalAuthFiles } from '../../../src/apiserver/auth/local-auth-files.js';
import { StaticTokenFile } from '../../../src/apiserver/auth/token-file.js';
import { Registry } from '../../../src/apiserver/registry/registry.js';
import { Stores } from '../../../src/apiserver/store/stores.js';
import { startApiServer, type RunningApiServer } from '../../../src/apiserver/server.js';
import { ensurePki, type Pki } from '../../../src/apiserver/tls/pki.js';
import { HealthChecks } from '../../../src/observability/health.js';
import { MetricsRegistry } from '../../../src/observability/metrics.js';
import { SqliteStorage } from '../../../src/storage/sqlite.js';
import { gadgetKind, widgetKind } from '../../../harness/widget-kind.js';
import { staticAuthentication } from '../../../src/apiserver/auth/authenticator.js';

let dataDir: string;
let pki: Pki;
let files: LocalAuthFiles;
let tokens: StaticTokenFile;
let policies: AbacAuthorizer;
let storage: SqliteStorage;
let server: RunningApiServer;
let adminToken: string;
/** A kubeconfig with the cluster and CA but no credentials; tests add --token. */
let bareKubeconfig: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'capo-bearer-'));
  pki = await ensurePki(dataDir, { serverHosts: ['127.0.0.1'] });
  files = await ensureLocalAuthFiles(dataDir);
  adminToken = await readFile(files.adminTokenFile, 'utf8');
  await appendFile(files.tokenFile, 'alice-token,alice,uid-alice,team-a\n');
  await appendFile(
    files.policyFile,
    `${JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec: { user: 'alice', namespace: 'team-a', resource: '*', apiGroup: '*' } })}\n`,
  );
  tokens = await StaticTokenFile.open(files.tokenFile);
  policies = await AbacAuthorizer.open(files.policyFile);
  storage = SqliteStorage.open(path.join(dataDir, 'capo.db'));
  server = await startApiServer({
    host: '127.0.0.1',
    port: 0,
    tls: { key: pki.serverKeyPem, cert: pki.serverCertPem },
    authentication: staticAuthentication(pki.caCertPem, tokens),
    registry: new Registry([widgetKind, gadgetKind]),
    stores: new Stores([widgetKind, gadgetKind], storage),
    authorizer: new UnionAuthorizer([new LocalAuthorizer(), policies]),
    metrics: new MetricsRegistry(),
    health: new HealthChecks(),
  });
  bareKubeconfig = await writeKubeconfig('bare', {});
});

afterAll(async () => {
  await server?.close();
  await storage?.close();
  tokens?.close();
  policies?.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function writeKubeconfig(name: string, user: Record<string, string>): Promise<string> {
  const file = path.join(dataDir, `${name}.kubeconfig`);
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'capo', cluster: { server: server.url, 'certificate-authority': path.join(dataDir, 'pki', 'ca.crt') } }],
    users: [{ name, user }],
    contexts: [{ name: 'capo', context: { cluster: 'capo', user: name } }],
    'current-context': 'capo',
  };
  await writeFile(file, stringify(config), { mode: 0o600 });
  return file;
}

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function kubectl(kubeconfig: string, args: string[], input?: string): Promise<Result> {
  return new Promise((resolve) => {
    const child = execFile(
      'kubectl',
      ['--kubeconfig', kubeconfig, ...args],
      { env: { ...process.env, HOME: dataDir }, timeout: 60_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

function widget(name: string, namespace: string): string {
  return JSON.stringify({ apiVersion: 'testing.capo.dev/v1', kind: 'Widget', metadata: { name, namespace }, spec: { color: 'blue' } });
}

function rawGet(urlPath: string, options: { token?: string; authorization?: string; certificate?: boolean } = {}): Promise<{ status: number; body: any }> {
  const authorization = options.token === undefined ? options.authorization : `Bearer ${options.token}`;
  return new Promise((resolve, reject) => {
    const request = https.request(
      `${server.url}${urlPath}`,
      {
        ca: pki.caCertPem,
        ...(options.certificate ? { cert: pki.adminCertPem, key: pki.adminKeyPem } : {}),
        headers: authorization === undefined ? {} : { Authorization: authorization },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      },
    );
    request.on('error', reject);
    request.end();
  });
}

const unauthorizedStatus = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };

describe('the admin token', () => {
  it('works as the kubeconfig user token', async () => {
    const kubeconfig = await writeKubeconfig('admin', { token: adminToken });
    const created = await kubectl(kubeconfig, ['create', '-f', '-'], widget('from-token', 'default'));
    expect(created.stderr).toBe('');
    expect(created.stdout).toBe('widget.testing.capo.dev/from-token created\n');
    const listed = await kubectl(kubeconfig, ['get', 'widgets', '-A', '-o', 'name']);
    expect(listed.stdout).toContain('widget.testing.capo.dev/from-token');
  });

  it('works with kubectl --token', async () => {
    const result = await kubectl(bareKubeconfig, ['--token', adminToken, 'get', 'widget', 'from-token', '-n', 'default', '-o', 'jsonpath={.spec.color}']);
    expect(result).toEqual({ code: 0, stdout: 'blue', stderr: '' });
  });
});

describe('a bad token', () => {
  it('gets 401 Unauthorized from kubectl', async () => {
    const result = await kubectl(bareKubeconfig, ['--token', 'not-a-token', 'get', 'widgets', '-n', 'default']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('error: You must be logged in to the server (Unauthorized)');
  });

  it('gets a 401 Status, even on paths anyone authenticated may read', async () => {
    expect(await rawGet('/apis/testing.capo.dev/v1/namespaces/default/widgets', { token: 'not-a-token' })).toEqual({ status: 401, body: unauthorizedStatus });
    expect(await rawGet('/apis', { token: 'not-a-token' })).toEqual({ status: 401, body: unauthorizedStatus });
  });

  it('does not override a client certificate, which kube tries first', async () => {
    const result = await rawGet('/apis/testing.capo.dev/v1/namespaces/default/widgets', { token: 'not-a-token', certificate: true });
    expect(result.status).toBe(200);
  });
});

describe('no credentials', () => {
  // Not through kubectl: with no credentials in the kubeconfig it prompts for a user name before sending anything.
  it('is system:anonymous, which gets 401', async () => {
    expect(await rawGet('/apis/testing.capo.dev/v1/widgets')).toEqual({ status: 401, body: unauthorizedStatus });
    expect(await rawGet('/apis')).toEqual({ status: 401, body: unauthorizedStatus });
  });

  it('ignores an Authorization header that is not a bearer token', async () => {
    expect(await rawGet('/apis', { authorization: 'Basic YWRtaW46YWRtaW4=' })).toEqual({ status: 401, body: unauthorizedStatus });
    expect(await rawGet('/apis', { authorization: 'Bearer' })).toEqual({ status: 401, body: unauthorizedStatus });
    expect((await rawGet('/apis', { authorization: `bearer ${adminToken}` })).status).toBe(200);
  });
});

describe('a user confined to one namespace by the policy file', () => {
  it('works in its namespace', async () => {
    const created = await kubectl(bareKubeconfig, ['--token', 'alice-token', 'create', '-f', '-'], widget('alices', 'team-a'));
    expect(created.stdout).toBe('widget.testing.capo.dev/alices created\n');
    const listed = await kubectl(bareKubeconfig, ['--token', 'alice-token', 'get', 'widgets', '-n', 'team-a', '-o', 'name']);
    expect(listed).toEqual({ code: 0, stdout: 'widget.testing.capo.dev/alices\n', stderr: '' });
  });

  it("gets 403 elsewhere, with kube-apiserver's message", async () => {
    const other = await kubectl(bareKubeconfig, ['--token', 'alice-token', 'get', 'widgets', '-n', 'default']);
    expect(other.code).not.toBe(0);
    expect(other.stderr.trim()).toBe(
      'Error from server (Forbidden): widgets.testing.capo.dev is forbidden: User "alice" cannot list resource "widgets" in API group "testing.capo.dev" in the namespace "default"',
    );
    const created = await kubectl(bareKubeconfig, ['--token', 'alice-token', 'create', '-f', '-'], widget('sneaky', 'default'));
    expect(created.stderr.trim()).toBe(
      'Error from server (Forbidden): error when creating "STDIN": widgets.testing.capo.dev is forbidden: User "alice" cannot create resource "widgets" in API group "testing.capo.dev" in the namespace "default"',
    );
    const clusterScoped = await kubectl(bareKubeconfig, ['--token', 'alice-token', 'get', 'gadgets']);
    expect(clusterScoped.stderr.trim()).toBe(
      'Error from server (Forbidden): gadgets.testing.capo.dev is forbidden: User "alice" cannot list resource "gadgets" in API group "testing.capo.dev" at the cluster scope',
    );
  });

  it('gains a namespace when a policy line is saved, and a new token works once added to the token file', async () => {
    await appendFile(
      files.policyFile,
      `${JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec: { group: 'viewers', namespace: 'default', resource: 'widgets', apiGroup: 'testing.capo.dev', readonly: true } })}\n`,
    );
    await appendFile(files.tokenFile, 'bob-token,bob,uid-bob,viewers\n');
    await expect
      .poll(async () => (await kubectl(bareKubeconfig, ['--token', 'bob-token', 'get', 'widgets', '-n', 'default', '-o', 'name'])).stdout, {
        timeout: 20_000,
        interval: 200,
      })
      .toContain('widget.testing.capo.dev/from-token');
    const write = await kubectl(bareKubeconfig, ['--token', 'bob-token', 'delete', 'widget', 'from-token', '-n', 'default']);
    expect(write.stderr.trim()).toBe(
      'Error from server (Forbidden): widgets.testing.capo.dev "from-token" is forbidden: User "bob" cannot delete resource "widgets" in API group "testing.capo.dev" in the namespace "default"',
    );
  });
});
