/**
 * The capo.openstack.inventory plugin against this server's real /graphql:
 * the real ansible-inventory --list, and its one-line errors for a bad
 * token and a forbidden namespace.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAnsibleWorkspace, requireAnsible, type AnsibleWorkspace } from '../ansible/workspace.js';
import { seed, teamAObjects, teamBObjects } from '../../harness/inventory-fixtures.js';
import { startInventoryServer, tokens, type InventoryServer } from '../../harness/inventory-server.js';

let server: InventoryServer;
let workspace: AnsibleWorkspace;

beforeAll(async () => {
  await requireAnsible();
  server = await startInventoryServer();
  await seed(server, [...teamAObjects(2), ...teamBObjects()]);
  workspace = await createAnsibleWorkspace();
});

afterAll(async () => {
  await server?.close();
  await workspace?.close();
});

/** ansible-inventory prints values the plugin marks untrusted this way. */
const unsafe = (value: string) => ({ __ansible_unsafe: value });

async function config(name: string, settings: Record<string, unknown>): Promise<string> {
  return workspace.writeConfig(`${name}.capo.yml`, { plugin: 'capo.openstack.inventory', url: `${server.url}/graphql`, ca_cert: server.caPath, ...settings });
}

it('ansible-inventory --list reads a cluster from /graphql', async () => {
  const file = await config('c1', { token: tokens.erin, namespace: 'team-a', cluster: 'c1' });
  const result = await workspace.inventory(['-i', file, '--list']);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  const list = JSON.parse(result.stdout);
  expect(list.kube_control_plane.hosts).toEqual(['c1-cp-0']);
  expect(list.kube_node.hosts).toEqual(['c1-md-000', 'c1-md-001']);
  expect(list.bastion.hosts).toEqual(['c1-bastion']);
  expect(list.k8s_cluster.children).toEqual(['kube_control_plane', 'kube_node']);
  const worker = list._meta.hostvars['c1-md-001'];
  expect(worker.ansible_host).toEqual(unsafe('10.6.1.2'));
  expect(worker.ansible_ssh_common_args).toEqual(unsafe('-o ProxyJump=ubuntu@203.0.113.10'));
  expect(worker.kube_network_plugin).toEqual(unsafe('cilium'));
  expect(worker).not.toHaveProperty('ansible_ssh_private_key_secret');
  expect(Object.keys(list._meta.hostvars).sort()).toEqual(['c1-bastion', 'c1-cp-0', 'c1-md-000', 'c1-md-001']);
});

it('ansible-inventory names a bad token and a forbidden namespace in one line', async () => {
  const badToken = await workspace.inventory(['-i', await config('bad-token', { token: 'wrong', namespace: 'team-a' }), '--list']);
  expect(badToken.code).not.toBe(0);
  expect(badToken.messages).toContain(
    'the server rejected the token; check token, token_file, CAPO_TOKEN or CAPO_TOKEN_FILE (UNAUTHENTICATED: the bearer token or client certificate is not valid)',
  );
  const forbidden = await workspace.inventory(['-i', await config('forbidden', { token: tokens.alice, namespace: 'team-b' }), '--list']);
  expect(forbidden.code).not.toBe(0);
  expect(forbidden.messages).toContain(
    `the token's user may not read this inventory (FORBIDDEN: openstackclusters.infrastructure.cluster.x-k8s.io is forbidden: User "alice" cannot list`,
  );
  expect(forbidden.messages).not.toContain('Traceback');
});
