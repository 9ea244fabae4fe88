/**
 * Namespace lifecycle admission as the store runs it, over HTTP: a create, a server-side apply that
 * would create and a /status apply of a missing object are one operation to admission (Create), and
 * are refused alike in a namespace being deleted or missing, while updates there go on; and the read
 * that decides whether an apply creates is the one admission sees, so an object deleted between that
 * read and the write is never created unadmitted. The namespaces are a table read by the real
 * decision (admitCreateInto) in place of the management cluster's informer.
 */
import type { V1Namespace } from '@kubernetes/client-node';
import https from 'node:https';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admitCreateInto } from '../../../src/apiserver/admission/namespace-lifecycle.js';
import { staticAuthentication } from '../../../src/apiserver/auth/authenticator.js';
import { LocalAuthorizer } from '../../../src/apiserver/auth/authorizer.js';
import { Registry } from '../../../src/apiserver/registry/registry.js';
import { startApiServer, type RunningApiServer } from '../../../src/apiserver/server.js';
import { Stores } from '../../../src/apiserver/store/stores.js';
import { ensurePki, type Pki } from '../../../src/apiserver/tls/pki.js';
import { HealthChecks } from '../../../src/observability/health.js';
import { MetricsRegistry } from '../../../src/observability/metrics.js';
import type { Storage } from '../../../src/storage/interface.js';
import { SqliteStorage } from '../../../src/storage/sqlite.js';
import { widgetKind } from '../../../harness/widget-kind.js';

let dataDir: string;
let pki: Pki;
let backend: SqliteStorage;
let server: RunningApiServer;
/** The management cluster's namespaces as admission finds them. */
const namespaces = new Map<string, V1Namespace>();
/** A key whose next read also deletes it, as a delete landing just after that read would. */
let deleteAfterNextRead: string | undefined;

const widgets = (namespace: string) => `/apis/testing.capo.dev/v1/namespaces/${namespace}/widgets`;
const widget = (name: string) => ({ apiVersion: 'testing.capo.dev/v1', kind: 'Widget', metadata: { name }, spec: { color: 'blue' }, status: { ready: true } });
const applied = { 'Content-Type': 'application/apply-patch+yaml' };

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'capo-namespace-lifecycle-'));
  pki = await ensurePki(dataDir, { serverHosts: ['127.0.0.1'] });
  backend = SqliteStorage.open(':memory:');
  const storage = new Proxy(backend, {
    get(target, property) {
      if (property === 'get') {
        return async (key: string) => {
          const entry = await target.get(key);
          if (entry && key === deleteAfterNextRead) {
            deleteAfterNextRead = undefined;
            await target.delete(key, entry.modRevision);
          }
          return entry;
        };
      }
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as Storage;
  const namespaceLifecycle = {
    admitCreate: async (namespace: string, resource: { group: string; resource: string }, name: string) =>
      admitCreateInto(namespaces.get(namespace), namespace, resource, name),
  };
  server = await startApiServer({
    host: '127.0.0.1',
    port: 0,
    tls: { key: pki.serverKeyPem, cert: pki.serverCertPem },
    authentication: staticAuthentication(pki.caCertPem),
    registry: new Registry([widgetKind]),
    stores: new Stores([widgetKind], storage, { namespaceLifecycle }),
    authorizer: new LocalAuthorizer(),
    metrics: new MetricsRegistry(),
    health: new HealthChecks(),
  });
});

afterAll(async () => {
  await server?.close();
  await backend?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** A request as the admin (client certificate); the answer's status code and JSON body. */
function send(
  method: string,
  urlPath: string,
  body?: unknown,
  headers: Record<string, string> = { 'Content-Type': 'application/json' },
): Promise<{ code: number; body: any }> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      `${server.url}${urlPath}`,
      { method, ca: pki.caCertPem, cert: pki.adminCertPem, key: pki.adminKeyPem, headers },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () => resolve({ code: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      },
    );
    request.on('error', reject);
    request.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const active = (name: string): V1Namespace => ({ metadata: { name }, status: { phase: 'Active' } });
const terminating = (name: string): V1Namespace => ({ metadata: { name, deletionTimestamp: new Date() }, status: { phase: 'Terminating' } });

describe('namespace lifecycle admission', () => {
  it('refuses a create, an apply that would create and a status apply of a missing object alike in a namespace being deleted, and lets updates there through', async () => {
    namespaces.set('doomed', active('doomed'));
    expect((await send('POST', widgets('doomed'), widget('kept'))).code).toBe(201);
    namespaces.set('doomed', terminating('doomed'));

    const created = await send('POST', widgets('doomed'), widget('new'));
    expect(created).toMatchObject({
      code: 403,
      body: {
        reason: 'Forbidden',
        message: 'widgets.testing.capo.dev "new" is forbidden: unable to create new content in namespace doomed because it is being terminated',
        details: { causes: [{ reason: 'NamespaceTerminating', field: 'metadata.namespace' }] },
      },
    });
    expect(await send('PATCH', `${widgets('doomed')}/new?fieldManager=test`, widget('new'), applied)).toEqual(created);
    expect(await send('PATCH', `${widgets('doomed')}/new/status?fieldManager=test`, widget('new'), applied)).toEqual(created);

    const updated = await send('PATCH', `${widgets('doomed')}/kept?fieldManager=test&force=true`, { ...widget('kept'), spec: { color: 'red' } }, applied);
    expect(updated).toMatchObject({ code: 200, body: { spec: { color: 'red' } } });
  });

  it('refuses them alike with NotFound in a namespace that does not exist', async () => {
    const created = await send('POST', widgets('nowhere'), widget('new'));
    expect(created).toMatchObject({ code: 404, body: { reason: 'NotFound', message: 'namespaces "nowhere" not found' } });
    expect(await send('PATCH', `${widgets('nowhere')}/new?fieldManager=test`, widget('new'), applied)).toEqual(created);
  });

  it('never creates an object unadmitted when the one an apply found is deleted before it writes', async () => {
    namespaces.set('closing', active('closing'));
    expect((await send('POST', widgets('closing'), widget('fleeting'))).code).toBe(201);
    namespaces.set('closing', terminating('closing'));

    // Were existence checked apart from the apply's own read (as the handler once did), admission would be skipped for
    // the object found, and the apply would then create it in the terminating namespace (201).
    deleteAfterNextRead = '/registry/testing.capo.dev/widgets/closing/fleeting';
    const answer = await send('PATCH', `${widgets('closing')}/fleeting?fieldManager=test`, widget('fleeting'), applied);
    expect(deleteAfterNextRead).toBeUndefined();
    expect(answer.code).not.toBe(201);
    expect((await send('GET', `${widgets('closing')}/fleeting`)).code).toBe(404);
  });
});
