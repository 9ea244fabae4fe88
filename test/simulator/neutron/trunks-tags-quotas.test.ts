import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { neutronWith } from '../../../src/simulator/neutron/index.js';
import { call, create, expectFault, network, startCloud, unique, type Cloud } from './setup.js';

let cloud: Cloud;
beforeAll(async () => {
  cloud = await startCloud();
});
afterAll(async () => {
  await cloud.sim.close();
});

describe('trunks', () => {
  it('creates a trunk on a parent port, shows trunk_details and guards its ports', async () => {
    const { net } = await network(cloud, cloud.demo, '10.0.0.0/24');
    const parent = await create(cloud.demo, `${cloud.v2}/ports`, 'port', { network_id: net.id, name: unique('parent') });
    const sub = await create(cloud.demo, `${cloud.v2}/ports`, 'port', { network_id: net.id });
    const res = await call(cloud.demo, 'POST', `${cloud.v2}/trunks`, {
      trunk: { name: parent.name, port_id: parent.id, description: 'd', sub_ports: [{ port_id: sub.id, segmentation_type: 'vlan', segmentation_id: 101 }] },
    });
    expect(res.status).toBe(201);
    const trunk = res.body.trunk;
    expect(trunk).toMatchObject({
      name: parent.name,
      port_id: parent.id,
      status: 'DOWN',
      admin_state_up: true,
      description: 'd',
      sub_ports: [{ port_id: sub.id, segmentation_type: 'vlan', segmentation_id: 101 }],
      tags: [],
      project_id: cloud.demo.projectId,
    });
    // CAPO finds trunks by name and port.
    const found = await call(cloud.demo, 'GET', `${cloud.v2}/trunks?name=${parent.name}&port_id=${parent.id}`);
    expect(found.body.trunks.map((t: { id: string }) => t.id)).toEqual([trunk.id]);
    const parentView = await call(cloud.demo, 'GET', `${cloud.v2}/ports/${parent.id}`);
    expect(parentView.body.port.trunk_details).toEqual({
      trunk_id: trunk.id,
      sub_ports: [{ port_id: sub.id, segmentation_type: 'vlan', segmentation_id: 101, mac_address: sub.mac_address }],
    });

    expectFault(
      await call(cloud.demo, 'DELETE', `${cloud.v2}/ports/${parent.id}`),
      409,
      'PortInUseAsTrunkParent',
      `Port ${parent.id} is currently a parent port for trunk ${trunk.id}.`,
    );
    expectFault(
      await call(cloud.demo, 'DELETE', `${cloud.v2}/ports/${sub.id}`),
      409,
      'PortInUseAsSubPort',
      `Port ${sub.id} is currently a subport for trunk ${trunk.id}.`,
    );
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/trunks`, { trunk: { port_id: parent.id } }),
      409,
      'ParentPortInUse',
      `Port ${parent.id} is currently in use and is not eligible for use as a parent port.`,
    );
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/trunks`, { trunk: { port_id: sub.id } }),
      409,
      'TrunkPortInUse',
      `Port ${sub.id} is in use by another trunk.`,
    );

    // CAPO's deletion: sub-ports off, sub-port ports, trunk, parent port.
    const removed = await call(cloud.demo, 'PUT', `${cloud.v2}/trunks/${trunk.id}/remove_subports`, { sub_ports: [{ port_id: sub.id }] });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ id: trunk.id, sub_ports: [] });
    expect((await call(cloud.demo, 'DELETE', `${cloud.v2}/ports/${sub.id}`)).status).toBe(204);
    expect((await call(cloud.demo, 'DELETE', `${cloud.v2}/trunks/${trunk.id}`)).status).toBe(204);
    expectFault(await call(cloud.demo, 'GET', `${cloud.v2}/trunks/${trunk.id}`), 404, 'TrunkNotFound', `Trunk ${trunk.id} could not be found.`);
    expect((await call(cloud.demo, 'DELETE', `${cloud.v2}/ports/${parent.id}`)).status).toBe(204);
  });

  it('adds and removes sub-ports with the trunk plugin’s checks', async () => {
    const { net } = await network(cloud, cloud.demo, '10.0.1.0/24');
    const parent = await create(cloud.demo, `${cloud.v2}/ports`, 'port', { network_id: net.id });
    const [a, b, bound] = [
      await create(cloud.demo, `${cloud.v2}/ports`, 'port', { network_id: net.id }),
      await create(cloud.demo, `${cloud.v2}/ports`, 'port', { network_id: net.id }),
      await create(cloud.demo, `${cloud.v2}/ports`, 'port', { network_id: net.id, device_id: 'some-server' }),
    ];
    const trunk = await create(cloud.demo, `${cloud.v2}/trunks`, 'trunk', { port_id: parent.id });
    const url = `${cloud.v2}/trunks/${trunk.id}`;
    const added = await call(cloud.demo, 'PUT', `${url}/add_subports`, { sub_ports: [{ port_id: a.id, segmentation_type: 'vlan', segmentation_id: 10 }] });
    expect(added.body.sub_ports).toEqual([{ port_id: a.id, segmentation_type: 'vlan', segmentation_id: 10 }]);
    expect((await call(cloud.demo, 'GET', `${url}/get_subports`)).body).toEqual({
      sub_ports: [{ port_id: a.id, segmentation_type: 'vlan', segmentation_id: 10 }],
    });
    expectFault(
      await call(cloud.demo, 'PUT', `${url}/add_subports`, { sub_ports: [{ port_id: b.id, segmentation_type: 'vlan', segmentation_id: 10 }] }),
      409,
      'DuplicateSubPort',
      `segmentation_type vlan and segmentation_id 10 already in use on trunk ${trunk.id}.`,
    );
    expectFault(
      await call(cloud.demo, 'PUT', `${url}/add_subports`, { sub_ports: [{ port_id: b.id, segmentation_type: 'vlan', segmentation_id: 5000 }] }),
      400,
      'InvalidInput',
      "Invalid input for operation: Segmentation ID '5000' is not in range.",
    );
    expectFault(
      await call(cloud.demo, 'PUT', `${url}/add_subports`, { sub_ports: [{ port_id: b.id }] }),
      400,
      'InvalidInput',
      /^Invalid input for operation: Invalid subport details .*: missing segmentation information\. Must specify both segmentation_id and segmentation_type\.$/,
    );
    expectFault(
      await call(cloud.demo, 'PUT', `${url}/add_subports`, { sub_ports: [{ port_id: bound.id, segmentation_type: 'vlan', segmentation_id: 11 }] }),
      409,
      'PortInUse',
      `Unable to complete operation on port ${bound.id} for network ${net.id}. Port already has an attached device some-server.`,
    );
    expectFault(
      await call(cloud.demo, 'PUT', `${url}/add_subports`, { sub_ports: [{ port_id: parent.id, segmentation_type: 'vlan', segmentation_id: 12 }] }),
      409,
      'ParentPortInUse',
    );
    expectFault(
      await call(cloud.demo, 'PUT', `${url}/add_subports`, { sub_ports: 'x' }),
      400,
      'InvalidInput',
      "Invalid input for operation: Invalid data format for subports: 'x' is not a list.",
    );
    expectFault(
      await call(cloud.demo, 'PUT', `${url}/remove_subports`, { sub_ports: [{ port_id: b.id }] }),
      404,
      'SubPortNotFound',
      `SubPort ${b.id} on trunk ${trunk.id} could not be found.`,
    );
    const missing = '99999999-0000-4000-8000-000000000000';
    expectFault(
      await call(cloud.demo, 'PUT', `${url}/add_subports`, { sub_ports: [{ port_id: missing, segmentation_type: 'vlan', segmentation_id: 13 }] }),
      404,
      'PortNotFound',
    );

    const disabled = await call(cloud.demo, 'PUT', url, { trunk: { admin_state_up: false, name: 'off' } });
    expect(disabled.body.trunk).toMatchObject({ admin_state_up: false, name: 'off' });
    expectFault(await call(cloud.demo, 'DELETE', url), 409, 'TrunkDisabled', `Trunk ${trunk.id} is currently disabled.`);
    await call(cloud.demo, 'PUT', url, { trunk: { admin_state_up: true } });
    expect((await call(cloud.demo, 'DELETE', url)).status).toBe(204);
    // Sub-ports are released with the trunk.
    expect((await call(cloud.demo, 'DELETE', `${cloud.v2}/ports/${a.id}`)).status).toBe(204);
  });

  it('rejects bad create bodies', async () => {
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/trunks`, { trunk: {} }),
      400,
      'HTTPBadRequest',
      "Failed to parse request. Required attribute 'port_id' not specified",
    );
    const missing = '88888888-0000-4000-8000-000000000000';
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/trunks`, { trunk: { port_id: missing } }),
      404,
      'PortNotFound',
      `Port ${missing} could not be found.`,
    );
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/trunks`, { trunk: { port_id: missing, sub_ports: [{ port_id: 'nope' }] } }),
      400,
      'HTTPBadRequest',
      "Invalid input for sub_ports. Reason: Invalid UUID for subport: 'nope'.",
    );
  });
});

describe('tags', () => {
  it('replaces, adds, checks and removes tags on every tagged resource', async () => {
    const { net, subnet } = await network(cloud, cloud.demo, '10.9.0.0/24');
    const port = await create(cloud.demo, `${cloud.v2}/ports`, 'port', { network_id: net.id });
    const router = await create(cloud.demo, `${cloud.v2}/routers`, 'router', { name: unique('r') });
    const sg = await create(cloud.demo, `${cloud.v2}/security-groups`, 'security_group', { name: unique('sg') });
    const fip = await create(cloud.demo, `${cloud.v2}/floatingips`, 'floatingip', { floating_network_id: cloud.publicNetwork });
    const trunk = await create(cloud.demo, `${cloud.v2}/trunks`, 'trunk', { port_id: port.id });
    const targets: [string, string, string][] = [
      ['networks', 'network', net.id],
      ['subnets', 'subnet', subnet.id],
      ['ports', 'port', port.id],
      ['routers', 'router', router.id],
      ['security-groups', 'security_group', sg.id],
      ['floatingips', 'floatingip', fip.id],
      ['trunks', 'trunk', trunk.id],
    ];
    for (const [path, member, id] of targets) {
      const url = `${cloud.v2}/${path}/${id}`;
      const before = (await call(cloud.demo, 'GET', url)).body[member].revision_number;
      const put = await call(cloud.demo, 'PUT', `${url}/tags`, { tags: ['cluster-a', 'k8s'] });
      expect(put.status).toBe(200);
      expect(put.body).toEqual({ tags: ['cluster-a', 'k8s'] });
      const shown = (await call(cloud.demo, 'GET', url)).body[member];
      expect(shown.tags.sort()).toEqual(['cluster-a', 'k8s']);
      expect(shown.revision_number).toBeGreaterThan(before);
      const one = await call(cloud.demo, 'PUT', `${url}/tags/extra`);
      expect(one.status).toBe(201);
      expect(one.body).toBeUndefined();
      expect((await call(cloud.demo, 'GET', `${url}/tags/extra`)).status).toBe(204);
      expect((await call(cloud.demo, 'GET', `${url}/tags`)).body.tags.sort()).toEqual(['cluster-a', 'extra', 'k8s']);
      const collection = (await call(cloud.demo, 'GET', `${cloud.v2}/${path}?tags=cluster-a,extra`)).body;
      expect(Object.values(collection)[0]).toHaveLength(1);
      expect((await call(cloud.demo, 'DELETE', `${url}/tags/extra`)).status).toBe(204);
      expectFault(await call(cloud.demo, 'GET', `${url}/tags/extra`), 404, 'TagNotFound', 'Tag extra could not be found.');
      expectFault(await call(cloud.demo, 'DELETE', `${url}/tags/extra`), 404, 'TagNotFound');
      expect((await call(cloud.demo, 'DELETE', `${url}/tags`)).status).toBe(204);
      expect((await call(cloud.demo, 'GET', `${url}/tags`)).body).toEqual({ tags: [] });
    }
  });

  it('validates tag bodies and unknown parents', async () => {
    const net = await create(cloud.demo, `${cloud.v2}/networks`, 'network', { name: unique('tags') });
    const url = `${cloud.v2}/networks/${net.id}/tags`;
    expectFault(await call(cloud.demo, 'PUT', url, { tag: [] }), 400, 'InvalidInput', 'Invalid input for operation: Invalid tags body.');
    expectFault(
      await call(cloud.demo, 'PUT', url, { tags: ['a', 'a'] }),
      400,
      'InvalidInput',
      "Invalid input for operation: Duplicate items in the list: 'a'.",
    );
    expectFault(await call(cloud.demo, 'PUT', url, { tags: ['x'.repeat(256)] }), 400, 'InvalidInput', /exceeds maximum length of 255/);
    const missing = '77777777-0000-4000-8000-000000000000';
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/networks/${missing}/tags`, { tags: [] }),
      404,
      'TagResourceNotFound',
      `Resource networks ${missing} could not be found.`,
    );
    expectFault(await call(cloud.demo, 'GET', `${cloud.v2}/security-group-rules/${missing}/tags`), 404, 'HTTPNotFound');
  });
});

describe('tags in the create body (tag-creation)', () => {
  const creates = (cloud: Cloud, tags: string[]) => async (): Promise<[string, string, Record<string, unknown>][]> => {
    const { net } = await network(cloud, cloud.demo, '10.9.1.0/24');
    const port = await create(cloud.demo, `${cloud.v2}/ports`, 'port', { network_id: net.id });
    return [
      ['networks', 'network', { name: unique('n'), tags }],
      ['subnets', 'subnet', { network_id: net.id, cidr: '10.9.2.0/24', ip_version: 4, tags }],
      ['routers', 'router', { name: unique('r'), tags }],
      ['security-groups', 'security_group', { name: unique('sg'), tags }],
      ['floatingips', 'floatingip', { floating_network_id: cloud.publicNetwork, tags }],
      ['trunks', 'trunk', { port_id: port.id, tags }],
    ];
  };

  it("are refused by Zed, except a port's, which it takes and drops", async () => {
    const aliases = (await call(cloud.demo, 'GET', `${cloud.v2}/extensions`)).body.extensions.map((extension: { alias: string }) => extension.alias);
    expect(aliases).not.toContain('tag-creation');
    const { net } = await network(cloud, cloud.demo, '10.9.4.0/24');
    const port = await call(cloud.demo, 'POST', `${cloud.v2}/ports`, { port: { network_id: net.id, tags: ['a'] } });
    expect(port.status).toBe(201);
    expect(port.body.port.tags).toEqual([]);
    for (const [path, member, body] of await creates(cloud, ['a'])()) {
      expectFault(await call(cloud.demo, 'POST', `${cloud.v2}/${path}`, { [member]: body }), 400, 'HTTPBadRequest', "Attribute 'tags' not allowed in POST");
    }
  });

  it("are taken by a Neutron with tag-creation, checked as a port's are", async () => {
    const modern = await startCloud(neutronWith({ tagCreation: true }));
    try {
      expect((await call(modern.demo, 'GET', `${modern.v2}/extensions/tag-creation`)).status).toBe(200);
      const { net } = await network(modern, modern.demo, '10.9.5.0/24');
      const port: [string, string, Record<string, unknown>] = ['ports', 'port', { network_id: net.id, tags: ['cluster-a', 'k8s'] }];
      for (const [path, member, body] of [...(await creates(modern, ['cluster-a', 'k8s'])()), port]) {
        const created = await call(modern.demo, 'POST', `${modern.v2}/${path}`, { [member]: body });
        expect(created.status, path).toBe(201);
        expect(created.body[member].tags.sort()).toEqual(['cluster-a', 'k8s']);
        const found = (await call(modern.demo, 'GET', `${modern.v2}/${path}?tags=cluster-a,k8s`)).body;
        expect(Object.values(found)[0], path).toHaveLength(1);
      }
      // Checked as any attribute of a create is, the same way as a port's tags.
      const duplicatePort = await call(modern.demo, 'POST', `${modern.v2}/ports`, { port: { network_id: net.id, tags: ['a', 'a'] } });
      const duplicateNetwork = await call(modern.demo, 'POST', `${modern.v2}/networks`, { network: { name: unique('n'), tags: ['a', 'a'] } });
      expectFault(duplicateNetwork, 400, 'HTTPBadRequest', duplicatePort.body.NeutronError.message);
      expect(duplicatePort.body.NeutronError.message).toMatch(/Duplicate items in the list: 'a'/);
    } finally {
      await modern.sim.close();
    }
  });
});

describe('quotas', () => {
  it('reports limits and usage, and answers OverQuota in Neutron’s words', async () => {
    const mine = await call(cloud.demo, 'GET', `${cloud.v2}/quotas/${cloud.demo.projectId}`);
    expect(mine.body.quota).toMatchObject({
      network: 200,
      subnet: 200,
      port: 1000,
      router: 100,
      floatingip: 200,
      security_group: 200,
      security_group_rule: 2000,
    });
    const adminQuota = await call(cloud.admin, 'GET', `${cloud.v2}/quotas/${cloud.admin.projectId}`);
    expect(adminQuota.body.quota).toEqual({ network: 100, subnet: 100, port: 500, router: 10, floatingip: 50, security_group: 10, security_group_rule: 100 });
    expectFault(
      await call(cloud.demo, 'GET', `${cloud.v2}/quotas/${cloud.admin.projectId}`),
      403,
      'PolicyNotAuthorized',
      'rule:get_quota is disallowed by policy',
    );

    const details = await call(cloud.demo, 'GET', `${cloud.v2}/quotas/${cloud.demo.projectId}/details.json`);
    const used = details.body.quota.network.used as number;
    expect(details.body.quota.network).toEqual({ used, limit: 200, reserved: 0 });

    for (const [resource, make] of [
      ['network', () => call(cloud.demo, 'POST', `${cloud.v2}/networks`, { network: {} })],
      ['router', () => call(cloud.demo, 'POST', `${cloud.v2}/routers`, { router: {} })],
      ['security_group', () => call(cloud.demo, 'POST', `${cloud.v2}/security-groups`, { security_group: { name: 'q' } })],
      ['floatingip', () => call(cloud.demo, 'POST', `${cloud.v2}/floatingips`, { floatingip: { floating_network_id: cloud.publicNetwork } })],
      ['port', () => call(cloud.demo, 'POST', `${cloud.v2}/ports`, { port: { network_id: cloud.publicNetwork } })],
    ] as const) {
      const usage = (await call(cloud.demo, 'GET', `${cloud.v2}/quotas/${cloud.demo.projectId}/details`)).body.quota[resource].used as number;
      cloud.sim.setQuota('demo', resource, usage);
      expectFault(await make(), 409, 'OverQuota', `Quota exceeded for resources: ['${resource}'].`);
      cloud.sim.setQuota('demo', resource, usage + 1);
      expect((await make()).status).toBe(201);
      cloud.sim.setQuota('demo', resource, mine.body.quota[resource]);
    }
    const { net } = await network(cloud, cloud.demo, '10.8.0.0/24');
    cloud.sim.setQuota('demo', 'subnet', 0);
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/subnets`, { subnet: { network_id: net.id, ip_version: 4, cidr: '10.8.1.0/24' } }),
      409,
      'OverQuota',
      "Quota exceeded for resources: ['subnet'].",
    );
    const sg = await create(cloud.demo, `${cloud.v2}/security-groups`, 'security_group', { name: unique('rules') });
    cloud.sim.setQuota('demo', 'security_group_rule', 0);
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/security-group-rules`, {
        security_group_rule: { security_group_id: sg.id, direction: 'ingress', protocol: 'tcp', port_range_min: 22, port_range_max: 22 },
      }),
      409,
      'OverQuota',
      "Quota exceeded for resources: ['security_group_rule'].",
    );
    // A new group brings two rules: the rule quota stops it too.
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/security-groups`, { security_group: { name: 'q2' } }),
      409,
      'OverQuota',
      "Quota exceeded for resources: ['security_group_rule'].",
    );
  });

  it('lets admins update and reset quotas through the API', async () => {
    const url = `${cloud.v2}/quotas/${cloud.admin.projectId}`;
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/quotas/${cloud.demo.projectId}`, { quota: { network: 5 } }),
      403,
      'PolicyNotAuthorized',
      'rule:update_quota is disallowed by policy',
    );
    const res = await call(cloud.admin, 'PUT', url, { quota: { network: 3, port: -1 } });
    expect(res.body.quota).toMatchObject({ network: 3, port: -1 });
    expectFault(await call(cloud.admin, 'PUT', url, { quota: { widgets: 3 } }), 400, 'HTTPBadRequest', "Unrecognized attribute(s) 'widgets'");
    expectFault(
      await call(cloud.admin, 'PUT', url, { quota: { network: -2 } }),
      400,
      'HTTPBadRequest',
      "Invalid input for network. Reason: '-2' is too small - must be at least '-1'.",
    );
    expectFault(
      await call(cloud.admin, 'PUT', url, { quota: { network: 0, check_limit: true } }),
      400,
      'HTTPBadRequest',
      /^Quota limit 0 for network must be greater than or equal to already used \d+$/,
    );
    expect((await call(cloud.admin, 'DELETE', url)).status).toBe(204);
    expect((await call(cloud.admin, 'GET', url)).body.quota).toMatchObject({ network: 100, port: 500 });
    expect((await call(cloud.admin, 'GET', `${url}/default`)).body.quota.security_group).toBe(10);
  });
});
