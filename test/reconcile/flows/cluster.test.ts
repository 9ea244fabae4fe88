/**
 * The whole flow on the embedded default: examples/ applied with kubectl
 * brings the cluster (3 control plane + 3 workers + bastion) to Ready on the
 * simulated cloud; deleting everything leaves nothing of ours behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../../harness/test-server.js';
import { startExampleServer, type ExampleServer } from './examples.js';

let example: ExampleServer;
let server: TestServer;
let manifests: string;

beforeAll(async () => {
  example = await startExampleServer();
  ({ server, manifests } = example);
});

afterAll(async () => {
  await example?.stop();
});

function ours(): Record<string, number> {
  const inventory = server.cloud!.inventory();
  return {
    networks: (inventory.network?.networks ?? 0) - 1,
    servers: inventory.compute?.servers ?? 0,
    loadbalancers: inventory['load-balancer']?.loadbalancers ?? 0,
  };
}

describe('the example cluster on the simulated cloud', () => {
  it('reaches Ready through kubectl apply and kubectl wait', async () => {
    const applied = await server.kubectl(['apply', '-f', manifests]);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    const cluster = await server.kubectl(['wait', '--for=condition=Ready', 'openstackcluster/demo', '--timeout=120s']);
    expect(cluster.stderr).toBe('');
    const machines = await server.kubectl(['wait', '--for=condition=Ready', 'openstackmachines', '--all', '--timeout=120s']);
    expect(machines.stderr).toBe('');
    const got = await server.kubectl(['get', 'openstackcluster', 'demo', '-o', 'json']);
    const status = JSON.parse(got.stdout).status;
    expect(status.initialization.provisioned).toBe(true);
    expect(status.bastion.floatingIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(status.apiServerManagedLoadBalancer.ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(ours().servers).toBe(7);
    expect(ours().loadbalancers).toBe(2);
    expect(status.extensions.loadBalancers.ingress.vip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  }, 180_000);

  it('gives the Ansible bootstrap every variable it reads, computed from what was built', async () => {
    const ready = await server.kubectl(['wait', '--for=condition=Ready', 'clusterextension/demo', '--timeout=60s']);
    expect(ready.stderr).toBe('');
    const got = await server.kubectl(['get', 'clusterextensions', 'demo', '-o', 'json']);
    expect(got.stderr).toBe('');
    const status = JSON.parse(got.stdout).status;
    expect(status.missing.filter((missing: { reason: string }) => missing.reason !== 'NotApplicable')).toEqual([]);
    expect(status.vars).toMatchObject({
      kube_network_plugin: 'cilium',
      ntp_server: 'pool.ntp.org',
      openstack_region_name: 'RegionOne',
      openstack_project_name: 'demo',
    });
  });

  it('deletes everything it created', async () => {
    const deleted = await server.kubectl(['delete', '-f', manifests, '--wait=true', '--timeout=120s']);
    expect(deleted.stderr).toBe('');
    expect(ours()).toEqual({ networks: 0, servers: 0, loadbalancers: 0 });
  }, 180_000);
});
