/**
 * The OpenStackServer reconciler one pass at a time: ports before the server, every ID recorded in
 * status, references resolved once; an image that does not exist is terminal (nothing created, the
 * condition says why); a port the cloud says is in use blocks deletion without an error storm; and
 * deletion removes the server before its ports, the finalizer last.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TerminalError } from '../../../src/reconcile/runtime/controller.js';
import { serverFinalizer } from '../../../src/reconcile/server/reconciler.js';
import type { JsonObject } from '../../../src/storage/interface.js';
import { condition, lastRequest, provisionExampleCluster, startSteps, type Steps } from '../steps.js';

let steps: Steps;
let networkId: string;

beforeAll(async () => {
  steps = await startSteps();
  await provisionExampleCluster(steps);
  const cluster = await steps.get('cluster', 'demo');
  networkId = (cluster?.status as { network: { id: string } } | undefined)?.network.id ?? '';
  expect(networkId).not.toBe('');
}, 90_000);

afterAll(async () => {
  await steps?.stop();
});

const meta = (object: JsonObject | undefined) => object?.metadata as Record<string, any>;
const status = (object: JsonObject | undefined) => (object?.status ?? {}) as Record<string, any>;

function openStackServer(name: string, image: string): JsonObject {
  return {
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
    kind: 'OpenStackServer',
    metadata: { name, namespace: 'default', labels: { 'cluster.x-k8s.io/cluster-name': 'demo' } },
    spec: {
      flavor: 'm1.small',
      image: { filter: { name: image } },
      // Required by CAPO's schema; empty injects no key pair, as a machine without one does.
      sshKeyName: '',
      identityRef: { name: 'demo-cloud-config', cloudName: 'openstack' },
      ports: [{ network: { id: networkId } }],
    },
  };
}

describe('the OpenStackServer reconciler', () => {
  it('gives up on an image that does not exist, creating nothing and saying why', async () => {
    await steps.applyObjects([openStackServer('no-image', 'no-such-image')]);
    await steps.pass('server', 'no-image');
    expect(meta(await steps.get('server', 'no-image')).finalizers).toEqual([serverFinalizer]);
    const before = steps.requests.length;
    await expect(steps.pass('server', 'no-image')).rejects.toBeInstanceOf(TerminalError);
    const failed = await steps.get('server', 'no-image');
    expect(JSON.stringify(status(failed).conditions)).toContain('no-such-image');
    expect(steps.requests.slice(before).filter((line) => / POST /.test(line) && !line.startsWith('identity '))).toEqual([]);
  });

  it('resolves an ORC Image through image.imageRef: failed while missing, waiting while on its way, its ID once Available', async () => {
    const byRef = openStackServer('by-ref', 'unused');
    (byRef.spec as JsonObject).image = { imageRef: { name: 'node-image' } };
    await steps.applyObjects([byRef]);
    await steps.pass('server', 'by-ref');
    await expect(steps.pass('server', 'by-ref')).rejects.toBeInstanceOf(TerminalError);
    expect(condition(await steps.get('server', 'by-ref'), 'InstanceReady')).toMatchObject({
      status: 'False',
      reason: 'DependencyFailed',
      message: expect.stringContaining('Image default/node-image does not exist'),
    });

    const [nodeImage] = await steps.documents('00-images.yaml');
    await steps.applyObjects([nodeImage]);
    const waiting = await steps.pass('server', 'by-ref');
    expect(waiting.requeueAfterMs).toBeGreaterThan(0);
    expect(condition(await steps.get('server', 'by-ref'), 'InstanceReady')).toMatchObject({
      status: 'False',
      reason: 'DependencyNotReady',
      message: 'waiting for Image default/node-image to be available',
    });
    expect(status(await steps.get('server', 'by-ref')).resolved).toBeUndefined();

    const image = await steps.until([['image', 'node-image']], (object) => condition(object, 'Available')?.status === 'True');
    await steps.pass('server', 'by-ref');
    expect(status(await steps.get('server', 'by-ref')).resolved.imageID).toBe(status(image).id);
    await steps.kubectl(['delete', 'openstackserver', 'by-ref', '--wait=false']);
    await steps.until([['server', 'by-ref']], (object) => object === undefined, 30_000);
  });

  it('creates the port, then the server, recording each ID and the resolved references', async () => {
    await steps.applyObjects([openStackServer('web', 'ubuntu-22.04')]);
    const ready = await steps.until([['server', 'web']], (object) => condition(object, 'InstanceReady')?.status === 'True', 45_000);
    expect(status(ready)).toMatchObject({ ready: true, instanceID: expect.any(String), instanceState: 'ACTIVE', resolved: { imageID: expect.any(String) } });
    expect(status(ready).resources.ports).toEqual([{ id: expect.any(String) }]);
    const port = lastRequest(steps.requests, /^network POST \/v2\.0\/ports /);
    const server = lastRequest(steps.requests, /^compute POST \/servers /);
    expect(port).toBeGreaterThanOrEqual(0);
    expect(port).toBeLessThan(server);
  });

  it('is blocked, not failing, while the cloud says its port is in use, then deletes the server before the port', async () => {
    const before = steps.requests.length;
    steps.cloud.faults.add({ service: 'network', method: 'DELETE', path: '^/v2\\.0/ports/', status: 409, message: 'Port is in use', times: 1 });
    await steps.kubectl(['delete', 'openstackserver', 'web', '--wait=false']);
    const blocked = await steps.until([['server', 'web']], (object) => condition(object, 'InstanceReady')?.reason === 'InstanceDeleteFailed', 30_000);
    expect(condition(blocked, 'InstanceReady')?.message).toMatch(/^port \S+ cannot be deleted yet \(HTTPConflict: Port is in use\)$/);
    expect(meta(blocked).finalizers).toEqual([serverFinalizer]);
    await steps.until([['server', 'web']], (object) => object === undefined, 60_000);
    const deletions = steps.requests.slice(before).filter((line) => / DELETE /.test(line));
    const serverDeleted = lastRequest(deletions, /^compute DELETE \/servers\//);
    const portDeleted = lastRequest(deletions, /^network DELETE \/v2\.0\/ports\/\S+ 204/);
    expect(serverDeleted).toBeGreaterThanOrEqual(0);
    expect(serverDeleted).toBeLessThan(portDeleted);
  });
});
