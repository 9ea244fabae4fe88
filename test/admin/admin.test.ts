/**
 * /admin/v1 over real HTTPS: the Ansible --list JSON of a cluster, the
 * reconciler hooks (queue, forced reconcile, preflight, leak audit and cleanup), and Kubernetes
 * Status answers for 401, 403, 404, 405 and 503.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminHooks } from '../../src/admin/router.js';
import { seed, teamAObjects, teamBObjects } from '../../harness/inventory-fixtures.js';
import { startInventoryServer, tokens, type InventoryServer } from '../../harness/inventory-server.js';

let server: InventoryServer;
const reconciles: string[] = [];
const hooks: AdminHooks = {};

beforeAll(async () => {
  server = await startInventoryServer({ admin: hooks });
  await seed(server, [...teamAObjects(2), ...teamBObjects()]);
});

afterAll(async () => {
  await server?.close();
});

function expectStatus(answer: { status: number; body: any }, code: number, reason: string) {
  expect(answer.status).toBe(code);
  expect(answer.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code });
}

describe('cluster inventory', () => {
  const path = '/admin/v1/namespaces/team-a/clusters/c1/inventory';

  it('is the ansible-inventory --list JSON that GraphQL gives the same caller', async () => {
    for (const token of [tokens.erin, tokens.bob]) {
      const answer = await server.request('GET', path, { token });
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe('application/json');
      const viaGraphql = await server.graphql('{ inventory(namespace: "team-a", name: "c1") { ansibleList } }', {}, { token });
      expect(answer.body).toEqual(viaGraphql.body.data.inventory.ansibleList);
    }
    const bob = (await server.request('GET', path, { token: tokens.bob })).body;
    expect(bob.kube_control_plane).toEqual({ hosts: ['c1-cp-0'] });
    expect(bob._meta.hostvars['c1-cp-0'].ansible_ssh_private_key_secret).toEqual({ namespace: 'team-a', name: 'c1-ssh', key: 'ssh-privatekey' });
    const erin = (await server.request('GET', path, { token: tokens.erin })).body;
    expect(erin._meta.hostvars['c1-cp-0']).not.toHaveProperty('ansible_ssh_private_key_secret');
  });

  it('is refused to a caller allowed only OpenStackClusters (issue 47, M6): its hosts are OpenStackNodes', async () => {
    const answer = await server.request('GET', path, { token: tokens.alice });
    expectStatus(answer, 403, 'Forbidden');
    expect(answer.body.message).toBe(
      'openstacknodes.extensions.capo-apiserver.io is forbidden: User "alice" cannot list resource "openstacknodes" in API group "extensions.capo-apiserver.io" in the namespace "team-a"',
    );
    expect(JSON.stringify(answer.body)).not.toMatch(/c1-cp-0|c1-md-00/);
    // A caller allowed every kind still gets every host.
    const admin = (await server.request('GET', path, { token: server.adminToken })).body;
    expect(Object.keys(admin._meta.hostvars)).toEqual(['c1-cp-0', 'c1-md-000', 'c1-md-001', 'c1-bastion']);
  });

  it('answers 401, 403, 404 and 405 as Kubernetes Status', async () => {
    expectStatus(await server.request('GET', path), 401, 'Unauthorized');
    expectStatus(await server.request('GET', path, { token: 'wrong' }), 401, 'Unauthorized');
    const forbidden = await server.request('GET', '/admin/v1/namespaces/team-b/clusters/c2/inventory', { token: tokens.alice });
    expectStatus(forbidden, 403, 'Forbidden');
    expect(forbidden.body.message).toBe(
      'openstackclusters.infrastructure.cluster.x-k8s.io is forbidden: User "alice" cannot list resource "openstackclusters" in API group "infrastructure.cluster.x-k8s.io" in the namespace "team-b"',
    );
    const missing = await server.request('GET', '/admin/v1/namespaces/team-a/clusters/nope/inventory', { token: tokens.alice });
    expectStatus(missing, 404, 'NotFound');
    expect(missing.body.message).toBe('OpenStackCluster nope not found in namespace team-a');
    expectStatus(await server.request('GET', '/admin/v1/namespaces/team-a/clusters/c1/nothing', { token: tokens.alice }), 404, 'NotFound');
    expectStatus(await server.request('GET', '/admin/v1', { token: tokens.alice }), 404, 'NotFound');
    const wrongMethod = await server.request('DELETE', path, { token: server.adminToken });
    expectStatus(wrongMethod, 405, 'MethodNotAllowed');
    expect(wrongMethod.headers.allow).toBe('GET');
  });
});

describe('reconciler hooks', () => {
  it('reports the queue to callers allowed the path, and 503 without a reconciler', async () => {
    hooks.queue = () => ({ depth: 2, inFlight: ['OpenStackCluster/team-a/c1'] });
    const answer = await server.request('GET', '/admin/v1/queue', { token: server.adminToken });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ depth: 2, inFlight: ['OpenStackCluster/team-a/c1'] });
    const forbidden = await server.request('GET', '/admin/v1/queue', { token: tokens.bob });
    expectStatus(forbidden, 403, 'Forbidden');
    expect(forbidden.body.message).toBe('forbidden: User "bob" cannot get path "/admin/v1/queue"');
    expectStatus(await server.request('POST', '/admin/v1/queue', { token: server.adminToken }), 405, 'MethodNotAllowed');
    delete hooks.queue;
    const unavailable = await server.request('GET', '/admin/v1/queue', { token: server.adminToken });
    expectStatus(unavailable, 503, 'ServiceUnavailable');
    expect(unavailable.body.message).toBe('this server runs no reconciler, so it offers no reconcile queue');
  });

  it('forces a reconcile for callers that may update the object', async () => {
    hooks.reconcile = async (kind, namespace, name) => {
      reconciles.push(`${kind}/${namespace}/${name}`);
      return name !== 'gone';
    };
    const accepted = await server.request('POST', '/admin/v1/namespaces/team-a/openstackmachines/c1-cp-0/reconcile', { token: tokens.bob });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ kind: 'Status', status: 'Success', code: 202, message: 'OpenStackMachine team-a/c1-cp-0 is queued for reconcile' });
    expect((await server.request('POST', '/admin/v1/namespaces/team-a/clusters/c1/reconcile', { token: tokens.bob })).status).toBe(202);
    expect(reconciles).toEqual(['OpenStackMachine/team-a/c1-cp-0', 'OpenStackCluster/team-a/c1']);

    expectStatus(await server.request('POST', '/admin/v1/namespaces/team-a/openstackclusters/c1/reconcile', { token: tokens.alice }), 403, 'Forbidden');
    expectStatus(await server.request('POST', '/admin/v1/namespaces/team-a/openstackclusters/gone/reconcile', { token: tokens.bob }), 404, 'NotFound');
    expectStatus(await server.request('POST', '/admin/v1/namespaces/team-a/widgets/c1/reconcile', { token: tokens.bob }), 404, 'NotFound');
    expectStatus(await server.request('GET', '/admin/v1/namespaces/team-a/openstackclusters/c1/reconcile', { token: tokens.bob }), 405, 'MethodNotAllowed');
    expect(reconciles).toHaveLength(3);
  });

  it("gives a cluster's preflight report to callers that may read the cluster", async () => {
    hooks.preflight = async (namespace, name) => ({ cluster: `${namespace}/${name}`, checks: [{ name: 'quota', status: 'Passed' }] });
    const report = await server.request('GET', '/admin/v1/namespaces/team-a/clusters/c1/preflight', { token: tokens.alice });
    expect(report.status).toBe(200);
    expect(report.body).toEqual({ cluster: 'team-a/c1', checks: [{ name: 'quota', status: 'Passed' }] });
    expectStatus(await server.request('GET', '/admin/v1/namespaces/team-b/clusters/c2/preflight', { token: tokens.alice }), 403, 'Forbidden');
    expectStatus(await server.request('GET', '/admin/v1/namespaces/team-a/clusters/nope/preflight', { token: tokens.alice }), 404, 'NotFound');
    delete hooks.preflight;
    expectStatus(await server.request('GET', '/admin/v1/namespaces/team-a/clusters/c1/preflight', { token: tokens.alice }), 503, 'ServiceUnavailable');
  });

  it('runs the leak audit and its cleanup for callers who may, checking what the cleanup names', async () => {
    const audit = {
      clouds: ['team-a/cloud:openstack'],
      leaks: [{ cloud: 'team-a/cloud:openstack', kind: 'networks', id: 'n1', name: 'left', ownerUid: 'gone' }],
      failed: [],
    };
    const cleaned: { kind: string; id: string }[] = [];
    hooks.leaks = async () => audit;
    hooks.cleanUpLeaks = async (targets) => {
      cleaned.push(...targets);
      return targets.map((target) => ({ ...target, outcome: 'deleted' }));
    };
    const admin = { token: server.adminToken };
    expect(await server.request('GET', '/admin/v1/leaks', admin)).toMatchObject({ status: 200, body: audit });
    const resources = [{ kind: 'networks', id: 'n1' }];
    expect(await server.request('POST', '/admin/v1/leaks/cleanup', { ...admin, body: { resources } })).toMatchObject({
      status: 200,
      body: { outcomes: [{ kind: 'networks', id: 'n1', outcome: 'deleted' }] },
    });
    expect(cleaned).toEqual(resources);
    // Bob may do anything in team-a, which is not the server's clouds.
    expectStatus(await server.request('GET', '/admin/v1/leaks', { token: tokens.bob }), 403, 'Forbidden');
    expectStatus(await server.request('POST', '/admin/v1/leaks/cleanup', { token: tokens.bob, body: { resources } }), 403, 'Forbidden');
    for (const body of [{ resources: [] }, { resources: [{ kind: 'networks' }] }, { resources, all: true }, 'everything']) {
      expectStatus(await server.request('POST', '/admin/v1/leaks/cleanup', { ...admin, body }), 400, 'BadRequest');
    }
    expectStatus(await server.request('GET', '/admin/v1/leaks/cleanup', admin), 405, 'MethodNotAllowed');
    expect(cleaned).toEqual(resources);
    // A replica without the reconciler's lease has no clouds to audit.
    hooks.leaks = async () => undefined;
    expectStatus(await server.request('GET', '/admin/v1/leaks', admin), 503, 'ServiceUnavailable');
    delete hooks.leaks;
    delete hooks.cleanUpLeaks;
    expectStatus(await server.request('GET', '/admin/v1/leaks', admin), 503, 'ServiceUnavailable');
  });
});
