/**
 * KubernetesIpam against a real Kubernetes API over HTTPS: this server in
 * its embedded mode, which serves ipam.cluster.x-k8s.io as Cluster API's
 * CRDs do (v1beta2, the claim's status subresource, watches, uid
 * preconditions), reached through a kubeconfig as a management cluster is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedKinds } from '../../../src/served-kinds.js';
import { embeddedClusterApiKinds } from '../../../src/api/embedded/kinds.js';
import { infrastructureKinds } from '../../../src/api/infrastructure/kinds.js';
import { loadKubeconfig } from '../../../src/reconcile/sources/kubeconfig.js';
import { KubernetesIpam } from '../../../src/reconcile/sources/kubernetes-ipam.js';
import { metaOf } from '../../../src/reconcile/objects.js';
import type { JsonObject } from '../../../src/storage/interface.js';
import { startTestServer, type TestServer } from '../../../harness/test-server.js';
import { eventually } from './eventually.js';

let server: TestServer;
let ipam: KubernetesIpam;
const errors: unknown[] = [];

const poolRef = { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'OpenStackFloatingIPPool', name: 'workers' };
const claimBody = (name: string): JsonObject => ({ metadata: { name, finalizers: ['example.com/hold'] }, spec: { poolRef } });

beforeAll(async () => {
  server = await startTestServer({ kinds: servedKinds });
  ipam = new KubernetesIpam(loadKubeconfig(server.kubeconfigPath), { onError: (error) => errors.push(error) });
});

afterAll(async () => {
  await server?.stop();
});

describe('KubernetesIpam', () => {
  it('creates, reads and lists claims in the served version', async () => {
    const created = await ipam.claims.create('default', claimBody('first'));
    expect(created).toMatchObject({ apiVersion: 'ipam.cluster.x-k8s.io/v1beta2', kind: 'IPAddressClaim', metadata: { name: 'first', namespace: 'default' } });
    expect(await ipam.claims.get({ namespace: 'default', name: 'first' })).toMatchObject({ spec: { poolRef } });
    expect(await ipam.claims.get({ namespace: 'default', name: 'absent' })).toBeUndefined();
    expect((await ipam.claims.list('default')).map((claim) => metaOf(claim).name)).toContain('first');
  });

  it('writes the status of the object with the given uid only', async () => {
    const claim = await ipam.claims.create('default', claimBody('status'));
    const target = { namespace: 'default', name: 'status', uid: metaOf(claim).uid };
    const written = await ipam.claims.updateStatus(target, (status) => {
      status.addressRef = { name: 'status' };
    });
    expect(written?.status).toEqual({ addressRef: { name: 'status' } });
    expect(await ipam.claims.updateStatus({ ...target, uid: 'another-uid' }, (status) => Object.assign(status, { addressRef: { name: 'x' } }))).toBeUndefined();
    expect((await ipam.claims.get(target))?.status).toEqual({ addressRef: { name: 'status' } });
  });

  it('deletes pinned to the uid, and lets a finalizer go', async () => {
    const claim = await ipam.claims.create('default', claimBody('doomed'));
    const target = { namespace: 'default', name: 'doomed', uid: metaOf(claim).uid };
    await ipam.claims.delete(target, 'another-uid');
    expect(metaOf((await ipam.claims.get(target))!).deletionTimestamp).toBeUndefined();
    await ipam.claims.delete(target, target.uid);
    expect(metaOf((await ipam.claims.get(target))!).deletionTimestamp).toBeDefined();
    await ipam.claims.removeFinalizer(target, 'example.com/hold');
    expect(await ipam.claims.get(target)).toBeUndefined();
    // Gone already is fine for both.
    await ipam.claims.delete(target, target.uid);
    await ipam.claims.removeFinalizer(target, 'example.com/hold');
  });

  it("reports the server's refusal of an invalid address", async () => {
    const body = { metadata: { name: 'bad' }, spec: { address: 'not-an-ip', prefix: 32, claimRef: { name: 'first' }, poolRef } };
    await expect(ipam.addresses.create('default', body)).rejects.toThrow(/creating IPAddress in default: .*not a valid IP address.*\(HTTP 422\)/);
  });

  it('watches claims and addresses', async () => {
    const seen: string[] = [];
    const watch = ipam.watch((object) => seen.push(`${String(object.kind)} ${metaOf(object).name}`));
    try {
      await ipam.addresses.create('default', {
        metadata: { name: 'watched' },
        spec: { address: '192.0.2.7', prefix: 32, claimRef: { name: 'watched' }, poolRef },
      });
      await ipam.claims.create('default', claimBody('watched'));
      await eventually(() => expect(seen).toEqual(expect.arrayContaining(['IPAddress watched', 'IPAddressClaim watched'])));
      expect(errors).toEqual([]);
    } finally {
      watch.stop();
    }
  });
});

describe('KubernetesIpam without Cluster API', () => {
  it('says Cluster API is not installed, and its watch keeps trying', async () => {
    const bare = await startTestServer({
      kinds: [...infrastructureKinds, ...embeddedClusterApiKinds.filter((kind) => kind.group !== 'ipam.cluster.x-k8s.io')],
    });
    const failures: unknown[] = [];
    try {
      const without = new KubernetesIpam(loadKubeconfig(bare.kubeconfigPath), { onError: (error) => failures.push(error) });
      await expect(without.claims.list('default')).rejects.toThrow(
        'ipam.cluster.x-k8s.io serves IPAddressClaims in none of v1beta2, v1beta1: is Cluster API installed?',
      );
      const watch = without.watch(() => {});
      await eventually(() => expect(failures.length).toBeGreaterThanOrEqual(2));
      watch.stop();
    } finally {
      await bare.stop();
    }
  });
});
