/**
 * The capo.openstack.inventory plugin as Ansible runs it: the real
 * ansible-inventory (ansible-core from Debian) against a stub GraphQL
 * endpoint serving a fixed inventory. Ansible 2.14 prints values the plugin
 * marked untrusted as {"__ansible_unsafe": ...}, so expectations wrap every
 * string from the server that way.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { startGraphqlStub, type GraphqlStub } from './graphql-stub.js';
import { collectionDir, createAnsibleWorkspace, requireAnsible, type AnsibleWorkspace } from './workspace.js';

const plugin = 'capo.openstack.inventory';
const token = 'fixture-token';

const inventoryQuery = `query AnsibleInventory($namespace: String, $name: String, $labelSelector: String) {
  inventory(namespace: $namespace, name: $name, labelSelector: $labelSelector) {
    revision
    groups { name hosts children vars }
    hosts { name vars }
  }
}`;

const proxyJump = '-o ProxyJump=debian@203.0.113.7';

/** A reconciled cluster as the server describes it: Kubespray groups, BA vars on k8s_cluster, per-host addresses. */
const fixture = {
  revision: '1234',
  groups: [
    {
      name: 'k8s_cluster',
      hosts: [],
      children: ['kube_control_plane', 'kube_node'],
      vars: {
        kube_network_plugin: 'cilium',
        master_virtual_vip: '10.6.0.10',
        cilium_openstack_security_group_ids: ['sg-1', 'sg-2'],
        vpc_cni_webhook_enable: true,
      },
    },
    { name: 'kube_control_plane', hosts: ['c1-cp-0', 'c1-cp-1'], children: [], vars: {} },
    { name: 'etcd', hosts: ['c1-cp-0', 'c1-cp-1'], children: null, vars: null },
    { name: 'kube_node', hosts: ['c1-w-0'], children: [], vars: { node_role: 'worker' } },
    { name: 'bastion', hosts: ['c1-bastion'], children: [], vars: {} },
  ],
  hosts: [
    {
      name: 'c1-cp-0',
      vars: {
        ansible_host: '10.6.0.11',
        ip: '10.6.0.11',
        ansible_user: 'debian',
        ansible_ssh_common_args: proxyJump,
        flavor: 'm1.large',
        node_resources: { cpu: '500m', memory: '1Gi', pods: 110 },
      },
    },
    { name: 'c1-cp-1', vars: { ansible_host: '10.6.0.12', ip: '10.6.0.12', ansible_user: 'debian', ansible_ssh_common_args: proxyJump, flavor: 'm1.large' } },
    {
      name: 'c1-w-0',
      vars: {
        ansible_host: '10.6.0.21',
        ip: '10.6.0.21',
        ansible_user: 'debian',
        ansible_ssh_common_args: proxyJump,
        flavor: 'm1.xlarge',
        motd: "{{ lookup('env', 'HOME') }}",
      },
    },
    { name: 'c1-bastion', vars: { ansible_host: '203.0.113.7', ansible_user: 'debian' } },
  ],
};

/** How ansible-inventory 2.14 prints a value the plugin marked as not a trusted template. */
function unsafe(value: unknown): unknown {
  if (typeof value === 'string') return { __ansible_unsafe: value };
  if (Array.isArray(value)) return value.map(unsafe);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, unsafe(item)]));
  return value;
}

const hostVars = Object.fromEntries(fixture.hosts.map((host) => [host.name, host.vars]));
const clusterVars = fixture.groups[0]!.vars!;
const workerVars = { node_role: 'worker' };

let stub: GraphqlStub;
let workspace: AnsibleWorkspace;

beforeAll(async () => {
  await requireAnsible();
  stub = await startGraphqlStub();
  workspace = await createAnsibleWorkspace();
});

afterAll(async () => {
  await stub?.close();
  await workspace?.close();
});

beforeEach(() => {
  stub.requests.length = 0;
  stub.reply = () => ({ body: { data: { inventory: fixture } } });
});

async function list(configPath: string, extra: string[] = [], env: Record<string, string | undefined> = {}): Promise<any> {
  const result = await workspace.inventory(['-i', configPath, '--list', ...extra], env);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout);
}

describe('the inventory as given', () => {
  it('sends the inventory query with the bearer token and the filters', async () => {
    const config = await workspace.writeConfig('one.capo.yml', { plugin, url: stub.url, token, namespace: 'team-a', cluster: 'c1' });
    await list(config);
    expect(stub.requests).toHaveLength(1);
    const [request] = stub.requests;
    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/graphql');
    expect(request!.headers.authorization).toBe(`Bearer ${token}`);
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.body).toEqual({
      query: inventoryQuery,
      operationName: 'AnsibleInventory',
      variables: { namespace: 'team-a', name: 'c1', labelSelector: null },
    });
  });

  it('sends a label selector and nulls for unset filters', async () => {
    const config = await workspace.writeConfig('selector.capo.yml', { plugin, url: stub.url, token, label_selector: 'env=prod,tier!=test' });
    await list(config);
    expect(stub.requests[0]!.body.variables).toEqual({ namespace: null, name: null, labelSelector: 'env=prod,tier!=test' });
  });

  it('lists groups, children, group vars and host vars exactly (--list --export)', async () => {
    const config = await workspace.writeConfig('export.capo.yml', { plugin, url: stub.url, token });
    expect(await list(config, ['--export'])).toEqual({
      _meta: { hostvars: unsafe(hostVars) },
      all: { children: ['ungrouped', 'k8s_cluster', 'etcd', 'bastion'] },
      k8s_cluster: { children: ['kube_control_plane', 'kube_node'], vars: unsafe(clusterVars) },
      kube_control_plane: { hosts: ['c1-cp-0', 'c1-cp-1'] },
      kube_node: { hosts: ['c1-w-0'], vars: unsafe(workerVars) },
      etcd: { hosts: ['c1-cp-0', 'c1-cp-1'] },
      bastion: { hosts: ['c1-bastion'] },
    });
  });

  it('resolves group vars into each host (--list)', async () => {
    const config = await workspace.writeConfig('merged.capo.yml', { plugin, url: stub.url, token });
    const listed = await list(config);
    expect(listed._meta.hostvars).toEqual({
      'c1-cp-0': unsafe({ ...clusterVars, ...hostVars['c1-cp-0'] }),
      'c1-cp-1': unsafe({ ...clusterVars, ...hostVars['c1-cp-1'] }),
      'c1-w-0': unsafe({ ...clusterVars, ...workerVars, ...hostVars['c1-w-0'] }),
      'c1-bastion': unsafe(hostVars['c1-bastion']),
    });
  });

  it('draws the group tree (--graph)', async () => {
    const config = await workspace.writeConfig('graph.capo.yml', { plugin, url: stub.url, token });
    const result = await workspace.inventory(['-i', config, '--graph']);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(
      [
        '@all:',
        '  |--@ungrouped:',
        '  |--@k8s_cluster:',
        '  |  |--@kube_control_plane:',
        '  |  |  |--c1-cp-0',
        '  |  |  |--c1-cp-1',
        '  |  |--@kube_node:',
        '  |  |  |--c1-w-0',
        '  |--@etcd:',
        '  |  |--c1-cp-0',
        '  |  |--c1-cp-1',
        '  |--@bastion:',
        '  |  |--c1-bastion',
        '',
      ].join('\n'),
    );
  });

  it('prints one host with its group vars (--host)', async () => {
    const config = await workspace.writeConfig('host.capo.yml', { plugin, url: stub.url, token });
    const result = await workspace.inventory(['-i', config, '--host', 'c1-w-0']);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual(unsafe({ ...clusterVars, ...workerVars, ...hostVars['c1-w-0'] }));
  });

  it('puts hosts that no group lists in ungrouped', async () => {
    stub.reply = () => ({ body: { data: { inventory: { revision: '1', groups: [], hosts: [{ name: 'loner', vars: { ansible_host: '10.0.0.9' } }] } } } });
    const config = await workspace.writeConfig('ungrouped.capo.yml', { plugin, url: stub.url, token });
    expect(await list(config, ['--export'])).toEqual({
      _meta: { hostvars: { loner: unsafe({ ansible_host: '10.0.0.9' }) } },
      all: { children: ['ungrouped'] },
      ungrouped: { hosts: ['loner'] },
    });
  });

  it('never lets a server value run as a template', async () => {
    const config = await workspace.writeConfig('untrusted.capo.yml', { plugin, url: stub.url, token });
    const result = await workspace.run('ansible', ['-i', config, 'c1-w-0', '-m', 'ansible.builtin.debug', '-a', 'var=motd']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`"motd": "{{ lookup('env', 'HOME') }}"`);
    expect(result.stdout).not.toContain(path.join(workspace.dir, 'home'));
  });
});

describe('constructed options', () => {
  it('applies compose, groups and keyed_groups to every host, seeing group vars too', async () => {
    const config = await workspace.writeConfig('constructed.capo.yml', {
      plugin,
      url: stub.url,
      token,
      compose: { ansible_port: 2222, cni: 'kube_network_plugin | default("none")', api_vip: 'master_virtual_vip | default(omit)' },
      groups: { large: "flavor | default('') == 'm1.large'", behind_bastion: "'ProxyJump' in (ansible_ssh_common_args | default(''))" },
      keyed_groups: [
        { key: 'kube_network_plugin', prefix: 'cni' },
        { key: 'ansible_user', prefix: 'user', separator: '_' },
        { key: 'cni', prefix: 'composed' },
      ],
    });
    const listed = await list(config, ['--export']);
    expect(listed.large).toEqual({ hosts: ['c1-cp-0', 'c1-cp-1'] });
    expect(listed.behind_bastion).toEqual({ hosts: ['c1-cp-0', 'c1-cp-1', 'c1-w-0'] });
    expect(listed.cni_cilium).toEqual({ hosts: ['c1-cp-0', 'c1-cp-1', 'c1-w-0'] });
    expect(listed.user_debian).toEqual({ hosts: ['c1-cp-0', 'c1-cp-1', 'c1-w-0', 'c1-bastion'] });
    expect(listed.composed_cilium).toEqual({ hosts: ['c1-cp-0', 'c1-cp-1', 'c1-w-0'] });
    expect(listed.composed_none).toEqual({ hosts: ['c1-bastion'] });
    // Templates render to text unless jinja2_native is on, so the port comes out as a string.
    expect(listed._meta.hostvars['c1-cp-0']).toMatchObject({ ansible_port: '2222', cni: unsafe('cilium'), api_vip: unsafe('10.6.0.10') });
    expect(listed._meta.hostvars['c1-bastion']).toMatchObject({ ansible_port: '2222', cni: 'none' });
    expect(listed._meta.hostvars['c1-bastion']).not.toHaveProperty('api_vip');
  });

  it('reports a compose expression that fails when strict is set, and skips it otherwise', async () => {
    const compose = { broken: 'no_such_var.attribute' };
    const lenient = await workspace.writeConfig('lenient.capo.yml', { plugin, url: stub.url, token, compose });
    expect((await list(lenient))._meta.hostvars['c1-cp-0']).not.toHaveProperty('broken');
    const strict = await workspace.writeConfig('strict.capo.yml', { plugin, url: stub.url, token, compose, strict: true });
    const result = await workspace.inventory(['-i', strict, '--list']);
    expect(result.code).not.toBe(0);
    expect(result.messages).toContain('Could not set broken for host c1-cp-0');
  });
});

describe('cache', () => {
  const second = { ...fixture, revision: '1235', hosts: [...fixture.hosts, { name: 'c1-w-1', vars: { ansible_host: '10.6.0.22' } }] };

  async function cacheEntries(): Promise<string[]> {
    return readdir(path.join(workspace.dir, 'cache')).catch(() => []);
  }

  async function cacheConfig(fileName: string, extra: Record<string, unknown> = {}): Promise<string> {
    return workspace.writeConfig(fileName, {
      plugin,
      url: stub.url,
      token,
      cache: true,
      cache_plugin: 'ansible.builtin.jsonfile',
      cache_connection: path.join(workspace.dir, 'cache'),
      ...extra,
    });
  }

  it('writes the answer, reads it on the next run, and refreshes it when Ansible flushes the cache', async () => {
    const config = await cacheConfig('cached.capo.yml', { namespace: 'cache-a' });
    const cacheDir = path.join(workspace.dir, 'cache');
    const earlier = await cacheEntries();
    expect(Object.keys((await list(config))._meta.hostvars)).toHaveLength(4);
    expect(stub.requests).toHaveLength(1);
    const entries = (await cacheEntries()).filter((name) => !earlier.includes(name));
    expect(entries).toHaveLength(1);
    const entry = path.join(cacheDir, entries[0]!);
    expect(JSON.parse(await readFile(entry, 'utf8')).revision).toBe('1234');

    stub.reply = () => ({ body: { data: { inventory: second } } });
    expect(Object.keys((await list(config))._meta.hostvars)).toHaveLength(4);
    expect(stub.requests).toHaveLength(1);

    // ansible-inventory has no --flush-cache; ansible-playbook's parses inventory with cache=False.
    const play = path.join(workspace.dir, 'noop.yml');
    await writeFile(play, '- hosts: localhost\n  gather_facts: false\n  tasks: []\n');
    const flushed = await workspace.run('ansible-playbook', ['-i', config, '--flush-cache', play]);
    expect(flushed.code).toBe(0);
    expect(stub.requests).toHaveLength(2);
    expect(JSON.parse(await readFile(entry, 'utf8')).revision).toBe('1235');

    expect((await list(config))._meta.hostvars).toHaveProperty('c1-w-1');
    expect(stub.requests).toHaveLength(2);
  });

  it('keys entries on url, namespace, cluster and selector, not on the file name', async () => {
    await list(await cacheConfig('key-a.capo.yml', { namespace: 'cache-b', cluster: 'c1' }));
    await list(await cacheConfig('key-b.capo.yml', { namespace: 'cache-b', cluster: 'c1' }));
    expect(stub.requests).toHaveLength(1);
    await list(await cacheConfig('key-c.capo.yml', { namespace: 'cache-b', cluster: 'c2' }));
    await list(await cacheConfig('key-d.capo.yml', { namespace: 'cache-b', label_selector: 'env=prod' }));
    await list(await cacheConfig('key-e.capo.yml', { namespace: 'cache-c', cluster: 'c1' }));
    expect(stub.requests).toHaveLength(4);
  });

  it('refetches over a cache entry that cannot be used, and says so', async () => {
    const config = await cacheConfig('corrupt.capo.yml', { namespace: 'cache-d' });
    const earlier = await cacheEntries();
    await list(config);
    const [entry] = (await cacheEntries()).filter((name) => !earlier.includes(name));
    await writeFile(path.join(workspace.dir, 'cache', entry!), JSON.stringify({ groups: 'not a list' }));
    const result = await workspace.inventory(['-i', config, '--list']);
    expect(result.code).toBe(0);
    expect(result.messages).toBe(
      `[WARNING]: Ignoring the cached inventory, which cannot be used: capo.openstack.inventory: inventory from ${stub.url} (namespace cache-d): unexpected inventory from the server: inventory.groups must be a list`,
    );
    expect(stub.requests).toHaveLength(2);
    expect(JSON.parse(await readFile(path.join(workspace.dir, 'cache', entry!), 'utf8')).revision).toBe('1234');
  });

  it('always asks the server when the cache is off', async () => {
    const config = await workspace.writeConfig('uncached.capo.yml', { plugin, url: stub.url, token });
    await list(config);
    await list(config);
    expect(stub.requests).toHaveLength(2);
  });
});

describe('settings from the environment', () => {
  it('takes url and token from CAPO_GRAPHQL_URL and CAPO_TOKEN', async () => {
    const config = await workspace.writeConfig('env.capo.yml', { plugin });
    await list(config, [], { CAPO_GRAPHQL_URL: stub.url, CAPO_TOKEN: 'from-env' });
    expect(stub.requests[0]!.headers.authorization).toBe('Bearer from-env');
  });

  it('takes the token file from CAPO_TOKEN_FILE, ignoring surrounding whitespace', async () => {
    const tokenFile = path.join(workspace.dir, 'env-token');
    await writeFile(tokenFile, '  token-in-file\n');
    const config = await workspace.writeConfig('env-file.capo.yml', { plugin, url: stub.url });
    await list(config, [], { CAPO_TOKEN_FILE: tokenFile });
    expect(stub.requests[0]!.headers.authorization).toBe('Bearer token-in-file');
  });

  it("prefers the file's settings over the environment, and token over token_file", async () => {
    const tokenFile = path.join(workspace.dir, 'unused-token');
    await writeFile(tokenFile, 'from-token-file');
    const config = await workspace.writeConfig('precedence.capo.yml', { plugin, url: stub.url, token: 'from-config', token_file: tokenFile });
    await list(config, [], { CAPO_GRAPHQL_URL: 'http://127.0.0.1:9/graphql', CAPO_TOKEN: 'from-env' });
    expect(stub.requests[0]!.headers.authorization).toBe('Bearer from-config');
  });
});

describe('which files the plugin takes', () => {
  const only = { ANSIBLE_INVENTORY_ENABLED: plugin };

  it('takes *.capo.yml and *.capo.yaml', async () => {
    for (const name of ['short.capo.yml', 'long.capo.yaml']) {
      const config = await workspace.writeConfig(name, { plugin, url: stub.url, token });
      expect((await list(config, [], only))._meta.hostvars).toHaveProperty('c1-cp-0');
    }
  });

  it('takes any YAML file whose plugin key names it', async () => {
    const config = await workspace.writeConfig('cluster.yml', { plugin, url: stub.url, token });
    expect((await list(config, [], only))._meta.hostvars).toHaveProperty('c1-cp-0');
  });

  it('declines other YAML files, saying why with -vvv', async () => {
    const config = await workspace.writeConfig('other.yml', { plugin: 'ansible.builtin.constructed' });
    const result = await workspace.inventory(['-i', config, '--list', '-vvv'], only);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toContain(`Skipping ${config}: the name does not end in .capo.yml or .capo.yaml and its plugin key is not ${plugin}`);
    expect(stub.requests).toHaveLength(0);
  });
});

describe('the collection', () => {
  it('documents the plugin for ansible-doc, with the constructed and cache options', async () => {
    const result = await workspace.run('ansible-doc', ['-t', 'inventory', '--json', plugin]);
    expect(result.stderr).toBe('');
    const options = JSON.parse(result.stdout)[plugin].doc.options;
    expect(options.url.env).toEqual([{ name: 'CAPO_GRAPHQL_URL' }]);
    expect(options.token.env).toEqual([{ name: 'CAPO_TOKEN' }]);
    expect(options.token_file.env).toEqual([{ name: 'CAPO_TOKEN_FILE' }]);
    expect(options.validate_certs.default).toBe(true);
    for (const name of [
      'namespace',
      'cluster',
      'label_selector',
      'ca_cert',
      'timeout',
      'compose',
      'groups',
      'keyed_groups',
      'strict',
      'cache',
      'cache_plugin',
    ]) {
      expect(options, name).toHaveProperty(name);
    }
  });

  it('builds with ansible-galaxy', async () => {
    const result = await workspace.run('ansible-galaxy', ['collection', 'build', collectionDir, '--output-path', workspace.dir]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain(`Created collection for capo.openstack at ${path.join(workspace.dir, 'capo-openstack-0.1.0.tar.gz')}`);
  });

  it('ships an example for the embedded default of npm start', async () => {
    expect(parseYaml(await readFile(path.join(collectionDir, 'examples', 'inventory.capo.yml'), 'utf8'))).toEqual({
      plugin,
      url: 'https://127.0.0.1:6443/graphql',
      token_file: 'data/token',
      ca_cert: 'data/pki/ca.crt',
    });
  });
});
