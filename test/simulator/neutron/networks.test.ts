import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, create, expectFault, network, startCloud, unique, type Cloud } from './setup.js';

let cloud: Cloud;
beforeAll(async () => {
  cloud = await startCloud();
});
afterAll(async () => {
  await cloud.sim.close();
});

describe('version documents and extensions', () => {
  it('serves / without a token and /v2.0 with one', async () => {
    const root = await fetch(`${cloud.sim.url}/network/`);
    expect(root.status).toBe(200);
    expect(await root.json()).toEqual({ versions: [{ id: 'v2.0', status: 'CURRENT', links: [{ href: `${cloud.sim.url}/network/v2.0/`, rel: 'self' }] }] });
    const v2 = await call(cloud.demo, 'GET', cloud.v2);
    expect(v2.body.resources.map((r: { collection: string }) => r.collection)).toEqual(['subnets', 'networks', 'ports']);
    expect((await fetch(`${cloud.v2}/networks`)).status).toBe(401);
  });

  it('lists the extensions CAPO feature-detects', async () => {
    const res = await call(cloud.demo, 'GET', `${cloud.v2}/extensions`);
    const aliases = res.body.extensions.map((e: { alias: string }) => e.alias);
    for (const alias of [
      'router',
      'external-net',
      'security-group',
      'trunk',
      'standard-attr-tag',
      'quotas',
      'port-security',
      'allowed-address-pairs',
      'binding',
      'extraroute',
    ]) {
      expect(aliases).toContain(alias);
    }
    const trunk = await call(cloud.demo, 'GET', `${cloud.v2}/extensions/trunk`);
    expect(trunk.body.extension).toEqual({
      alias: 'trunk',
      name: 'Trunk Extension',
      description: 'Provides support for trunk ports',
      updated: '2016-01-01T10:00:00-00:00',
      links: [],
    });
    expectFault(await call(cloud.demo, 'GET', `${cloud.v2}/extensions/nope`), 404, 'HTTPNotFound', 'Extension with alias nope does not exist');
  });

  it('accepts the .json suffix', async () => {
    const res = await call(cloud.demo, 'GET', `${cloud.v2}/networks.json?name=public`);
    expect(res.body.networks).toHaveLength(1);
  });
});

describe('the seeded external network', () => {
  it('is public, shared, external, flat and owned by admin, with a DHCP-less subnet', async () => {
    const adminView = await call(cloud.admin, 'GET', `${cloud.v2}/networks/${cloud.publicNetwork}`);
    expect(adminView.body.network).toMatchObject({
      name: 'public',
      shared: true,
      'router:external': true,
      mtu: 1500,
      status: 'ACTIVE',
      project_id: cloud.admin.projectId,
      tenant_id: cloud.admin.projectId,
      'provider:network_type': 'flat',
      'provider:physical_network': 'public',
      'provider:segmentation_id': null,
      subnets: [cloud.publicSubnet],
    });
    const demoView = await call(cloud.demo, 'GET', `${cloud.v2}/networks/${cloud.publicNetwork}`);
    expect(demoView.body.network).not.toHaveProperty('provider:network_type');
    const subnet = await call(cloud.demo, 'GET', `${cloud.v2}/subnets/${cloud.publicSubnet}`);
    expect(subnet.body.subnet).toMatchObject({
      cidr: '172.24.4.0/24',
      gateway_ip: '172.24.4.1',
      enable_dhcp: false,
      allocation_pools: [{ start: '172.24.4.10', end: '172.24.4.250' }],
      ip_version: 4,
    });
  });

  it('is what CAPO finds with router:external=True, and no one but admin may change it', async () => {
    const res = await call(cloud.demo, 'GET', `${cloud.v2}/networks?router:external=True`);
    expect(res.body.networks.map((n: { id: string }) => n.id)).toEqual([cloud.publicNetwork]);
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/networks/${cloud.publicNetwork}`, { network: { name: 'x' } }),
      403,
      'PolicyNotAuthorized',
      'rule:update_network is disallowed by policy',
    );
    expectFault(
      await call(cloud.demo, 'DELETE', `${cloud.v2}/networks/${cloud.publicNetwork}`),
      403,
      'PolicyNotAuthorized',
      'rule:delete_network is disallowed by policy',
    );
  });
});

describe('networks', () => {
  it('creates a VXLAN tenant network with Neutron defaults', async () => {
    const res = await call(cloud.demo, 'POST', `${cloud.v2}/networks`, { network: { name: 'n-defaults' } });
    expect(res.status).toBe(201);
    const net = res.body.network;
    expect(net).toMatchObject({
      name: 'n-defaults',
      admin_state_up: true,
      mtu: 1450,
      status: 'ACTIVE',
      subnets: [],
      shared: false,
      'router:external': false,
      port_security_enabled: true,
      description: '',
      tags: [],
      revision_number: 1,
      project_id: cloud.demo.projectId,
      tenant_id: cloud.demo.projectId,
      availability_zone_hints: [],
      ipv4_address_scope: null,
    });
    expect(net.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(net.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const asAdmin = await call(cloud.admin, 'GET', `${cloud.v2}/networks/${net.id}`);
    expect(asAdmin.body.network['provider:network_type']).toBe('vxlan');
    expect(asAdmin.body.network['provider:segmentation_id']).toBeGreaterThan(0);
  });

  it('updates and bumps the revision; rejects MTUs above the VXLAN maximum', async () => {
    const net = await create(cloud.demo, `${cloud.v2}/networks`, 'network', { name: unique('n-upd'), mtu: 1400, port_security_enabled: false });
    expect(net).toMatchObject({ mtu: 1400, port_security_enabled: false });
    const res = await call(cloud.demo, 'PUT', `${cloud.v2}/networks/${net.id}`, { network: { name: 'renamed', description: 'd', admin_state_up: false } });
    expect(res.body.network).toMatchObject({ name: 'renamed', description: 'd', admin_state_up: false, revision_number: 2 });
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/networks/${net.id}`, { network: { mtu: 9000 } }),
      400,
      'InvalidInput',
      'Invalid input for operation: Requested MTU is too big, maximum is 1450.',
    );
  });

  it('answers NetworkNotFound for unknown and foreign networks', async () => {
    const id = '5e0f4bc3-aaaa-4bbb-8ccc-1234567890ab';
    expectFault(await call(cloud.demo, 'GET', `${cloud.v2}/networks/${id}`), 404, 'NetworkNotFound', `Network ${id} could not be found.`);
    const adminNet = await create(cloud.admin, `${cloud.v2}/networks`, 'network', { name: unique('admin-private') });
    expectFault(await call(cloud.demo, 'GET', `${cloud.v2}/networks/${adminNet.id}`), 404, 'NetworkNotFound');
    expectFault(await call(cloud.demo, 'PUT', `${cloud.v2}/networks/${adminNet.id}`, { network: { name: 'x' } }), 404, 'NetworkNotFound');
    expectFault(await call(cloud.demo, 'DELETE', `${cloud.v2}/networks/${adminNet.id}`), 404, 'NetworkNotFound');
    const list = await call(cloud.demo, 'GET', `${cloud.v2}/networks?id=${adminNet.id}`);
    expect(list.body.networks).toEqual([]);
    const adminList = await call(cloud.admin, 'GET', `${cloud.v2}/networks?id=${adminNet.id}`);
    expect(adminList.body.networks).toHaveLength(1);
  });

  it('keeps admin-only attributes for admins', async () => {
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/networks`, { network: { name: 'ext', 'router:external': true } }),
      403,
      'PolicyNotAuthorized',
      '(rule:create_network and rule:create_network:router:external) is disallowed by policy',
    );
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/networks`, { network: { name: 'sh', shared: true, 'router:external': true } }),
      403,
      'PolicyNotAuthorized',
      '((rule:create_network and rule:create_network:shared) and rule:create_network:router:external) is disallowed by policy',
    );
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/networks`, { network: { 'provider:network_type': 'vlan' } }),
      403,
      'PolicyNotAuthorized',
      '(rule:create_network and rule:create_network:provider:network_type) is disallowed by policy',
    );
    // Explicitly default values carry no attribute policy.
    const plain = await call(cloud.demo, 'POST', `${cloud.v2}/networks`, { network: { name: unique('plain'), shared: false, 'router:external': false } });
    expect(plain.status).toBe(201);
    const vlan = await create(cloud.admin, `${cloud.v2}/networks`, 'network', {
      name: unique('vlan'),
      'provider:network_type': 'vlan',
      'provider:segmentation_id': 150,
    });
    expect(vlan).toMatchObject({ mtu: 1500, 'provider:physical_network': 'public', 'provider:segmentation_id': 150 });
    expectFault(
      await call(cloud.admin, 'POST', `${cloud.v2}/networks`, { network: { 'provider:network_type': 'vlan', 'provider:segmentation_id': 150 } }),
      409,
      'VlanIdInUse',
      'Unable to create the network. The VLAN 150 on physical network public is in use.',
    );
    expectFault(
      await call(cloud.admin, 'POST', `${cloud.v2}/networks`, { network: { 'provider:network_type': 'flat', 'provider:physical_network': 'public' } }),
      409,
      'FlatNetworkInUse',
      'Unable to create the flat network. Physical network public is in use.',
    );
  });

  it('validates bodies like Neutron', async () => {
    const url = `${cloud.v2}/networks`;
    expectFault(await call(cloud.demo, 'POST', url, { network: { name: 'x', foo: 1 } }), 400, 'HTTPBadRequest', "Unrecognized attribute(s) 'foo'");
    expectFault(await call(cloud.demo, 'POST', url, { network: { status: 'DOWN' } }), 400, 'HTTPBadRequest', "Attribute 'status' not allowed in POST");
    expectFault(await call(cloud.demo, 'POST', url, { network: { tags: ['a'] } }), 400, 'HTTPBadRequest', "Attribute 'tags' not allowed in POST");
    expectFault(
      await call(cloud.demo, 'POST', url, { network: { name: 42 } }),
      400,
      'HTTPBadRequest',
      "Invalid input for name. Reason: '42' is not a valid string.",
    );
    expectFault(await call(cloud.demo, 'POST', url, { network: { name: 'x'.repeat(256) } }), 400, 'HTTPBadRequest', /exceeds maximum length of 255/);
    expectFault(
      await call(cloud.demo, 'POST', url, { network: { admin_state_up: 'maybe' } }),
      400,
      'InvalidInput',
      "Invalid input for operation: 'maybe' cannot be converted to boolean.",
    );
    // Bulk create (allow_bulk is on by default): every item is validated like a single body.
    expectFault(await call(cloud.demo, 'POST', url, { networks: [{ name: 'ok' }, { foo: 1 }] }), 400, 'HTTPBadRequest', "Unrecognized attribute(s) 'foo'");
    expectFault(await call(cloud.demo, 'POST', url, { net: {} }), 400, 'HTTPBadRequest', "Unable to find 'network' in request body");
    expectFault(await call(cloud.demo, 'POST', url, {}), 400, 'HTTPBadRequest', 'Resource body required');
    expectFault(
      await call(cloud.demo, 'POST', url, { network: { project_id: cloud.admin.projectId } }),
      400,
      'HTTPBadRequest',
      "Specifying 'project_id' or 'tenant_id' other than the authenticated project in request requires admin or advsvc privileges",
    );
    const net = await create(cloud.demo, url, 'network', { name: unique('ro') });
    expectFault(
      await call(cloud.demo, 'PUT', `${url}/${net.id}`, { network: { tags: ['a'] } }),
      400,
      'HTTPBadRequest',
      'Cannot update read-only attribute tags',
    );
    expectFault(
      await call(cloud.demo, 'PUT', `${url}/${net.id}`, { network: { availability_zone_hints: [] } }),
      400,
      'HTTPBadRequest',
      'Cannot update read-only attribute availability_zone_hints',
    );
    const malformed = await fetch(url, {
      method: 'POST',
      headers: { 'x-auth-token': cloud.demo.token, 'content-type': 'application/json' },
      body: '{"network":',
    });
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).NeutronError.type).toBe('HTTPBadRequest');
  });

  it('filters, projects fields, sorts and pages', async () => {
    const tag = unique('flt');
    const ids: string[] = [];
    for (const name of ['b', 'a', 'c'])
      ids.push((await create(cloud.demo, `${cloud.v2}/networks`, 'network', { name: `${tag}-${name}`, description: tag })).id);
    const url = `${cloud.v2}/networks?description=${tag}`;
    const sorted = await call(cloud.demo, 'GET', `${url}&sort_key=name&sort_dir=desc&fields=name&fields=id`);
    expect(sorted.body.networks.map((n: { name: string }) => n.name)).toEqual([`${tag}-c`, `${tag}-b`, `${tag}-a`]);
    expect(Object.keys(sorted.body.networks[0]).sort()).toEqual(['id', 'name']);
    const two = await call(cloud.demo, 'GET', `${url}&name=${tag}-a&name=${tag}-c&sort_key=name&sort_dir=asc`);
    expect(two.body.networks.map((n: { name: string }) => n.name)).toEqual([`${tag}-a`, `${tag}-c`]);
    expect((await call(cloud.demo, 'GET', `${url}&admin_state_up=False`)).body.networks).toEqual([]);
    expect((await call(cloud.demo, 'GET', `${url}&shared=false`)).body.networks).toHaveLength(3);
    expect((await call(cloud.demo, 'GET', `${url}&id=${ids[1]}`)).body.networks.map((n: { id: string }) => n.id)).toEqual([ids[1]]);
    expect((await call(cloud.demo, 'GET', `${url}&project_id=${cloud.admin.projectId}`)).body.networks).toEqual([]);
    expect((await call(cloud.demo, 'GET', `${url}&status=ACTIVE&mtu=1450`)).body.networks).toHaveLength(3);

    const page1 = await call(cloud.demo, 'GET', `${url}&limit=2&sort_key=name&sort_dir=asc`);
    expect(page1.body.networks.map((n: { name: string }) => n.name)).toEqual([`${tag}-a`, `${tag}-b`]);
    const next = page1.body.networks_links.find((l: { rel: string }) => l.rel === 'next').href as string;
    expect(next).toContain(`marker=${page1.body.networks[1].id}`);
    const page2 = await call(cloud.demo, 'GET', next);
    expect(page2.body.networks.map((n: { name: string }) => n.name)).toEqual([`${tag}-c`]);
    expect(page2.body.networks_links.map((l: { rel: string }) => l.rel)).toEqual(['previous']);

    expectFault(await call(cloud.demo, 'GET', `${cloud.v2}/networks?foo=1&bar=2`), 400, 'HTTPBadRequest', "['foo', 'bar'] is invalid attribute for filtering");
    expectFault(await call(cloud.demo, 'GET', `${cloud.v2}/networks?shared=perhaps`), 400, 'InvalidInput');
    expectFault(
      await call(cloud.demo, 'GET', `${cloud.v2}/networks?sort_key=name`),
      400,
      'HTTPBadRequest',
      'The number of sort_keys and sort_dirs must be same',
    );
    expectFault(
      await call(cloud.demo, 'GET', `${cloud.v2}/networks?sort_key=subnets&sort_dir=asc`),
      400,
      'HTTPBadRequest',
      "['subnets'] is invalid attribute for sort_keys",
    );
    expectFault(
      await call(cloud.demo, 'GET', `${cloud.v2}/networks?limit=-1`),
      400,
      'BadRequest',
      "Bad limit request: Limit must be an integer 0 or greater and not '-1'.",
    );
  });

  it('refuses to delete a network with ports (NetworkInUse) and takes its subnets along otherwise', async () => {
    const { net, subnet } = await network(cloud, cloud.demo, '10.40.0.0/24');
    const port = await create(cloud.demo, `${cloud.v2}/ports`, 'port', { network_id: net.id });
    expectFault(
      await call(cloud.demo, 'DELETE', `${cloud.v2}/networks/${net.id}`),
      409,
      'NetworkInUse',
      `Unable to complete operation on network ${net.id}. There are one or more ports still in use on the network.`,
    );
    expect((await call(cloud.demo, 'DELETE', `${cloud.v2}/ports/${port.id}`)).status).toBe(204);
    const del = await call(cloud.demo, 'DELETE', `${cloud.v2}/networks/${net.id}`);
    expect(del.status).toBe(204);
    expect(del.body).toBeUndefined();
    expectFault(await call(cloud.demo, 'GET', `${cloud.v2}/subnets/${subnet.id}`), 404, 'SubnetNotFound', `Subnet ${subnet.id} could not be found.`);
  });
});

describe('subnets', () => {
  it('defaults gateway and pools, normalises the CIDR, and bumps the network', async () => {
    const net = await create(cloud.demo, `${cloud.v2}/networks`, 'network', { name: unique('sn') });
    const res = await call(cloud.demo, 'POST', `${cloud.v2}/subnets`, {
      subnet: { network_id: net.id, ip_version: 4, cidr: '10.1.0.77/24', dns_nameservers: ['8.8.8.8'] },
    });
    expect(res.status).toBe(201);
    expect(res.body.subnet).toMatchObject({
      cidr: '10.1.0.0/24',
      gateway_ip: '10.1.0.1',
      allocation_pools: [{ start: '10.1.0.2', end: '10.1.0.254' }],
      enable_dhcp: true,
      dns_nameservers: ['8.8.8.8'],
      host_routes: [],
      ipv6_ra_mode: null,
      subnetpool_id: null,
      revision_number: 0,
    });
    const after = await call(cloud.demo, 'GET', `${cloud.v2}/networks/${net.id}`);
    expect(after.body.network).toMatchObject({ subnets: [res.body.subnet.id], revision_number: 2 });

    const mid = await create(cloud.demo, `${cloud.v2}/subnets`, 'subnet', { network_id: net.id, ip_version: 4, cidr: '10.1.1.0/28', gateway_ip: '10.1.1.5' });
    expect(mid.allocation_pools).toEqual([
      { start: '10.1.1.1', end: '10.1.1.4' },
      { start: '10.1.1.6', end: '10.1.1.14' },
    ]);
    const noGw = await create(cloud.demo, `${cloud.v2}/subnets`, 'subnet', { network_id: net.id, ip_version: 4, cidr: '10.1.2.0/29', gateway_ip: null });
    expect(noGw).toMatchObject({ gateway_ip: null, allocation_pools: [{ start: '10.1.2.1', end: '10.1.2.6' }] });
    const v6 = await create(cloud.demo, `${cloud.v2}/subnets`, 'subnet', { network_id: net.id, ip_version: 6, cidr: '2001:DB8::/64' });
    expect(v6).toMatchObject({
      cidr: '2001:db8::/64',
      gateway_ip: '2001:db8::1',
      allocation_pools: [{ start: '2001:db8::2', end: '2001:db8::ffff:ffff:ffff:ffff' }],
    });
  });

  it('rejects bad CIDRs, versions, gateways and pools', async () => {
    const net = await create(cloud.demo, `${cloud.v2}/networks`, 'network', { name: unique('bad') });
    const post = (attrs: Record<string, unknown>) =>
      call(cloud.demo, 'POST', `${cloud.v2}/subnets`, { subnet: { network_id: net.id, ip_version: 4, ...attrs } });
    expectFault(await post({ cidr: '10.0.0.0/33' }), 400, 'HTTPBadRequest', "Invalid input for cidr. Reason: '10.0.0.0/33' is not a valid IP subnet.");
    expectFault(await post({ cidr: 'banana' }), 400, 'HTTPBadRequest', "Invalid input for cidr. Reason: 'banana' is not a valid IP subnet.");
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/subnets`, { subnet: { network_id: net.id, cidr: '10.0.0.0/24' } }),
      400,
      'HTTPBadRequest',
      "Failed to parse request. Required attribute 'ip_version' not specified",
    );
    expectFault(await post({ ip_version: 5, cidr: '10.0.0.0/24' }), 400, 'HTTPBadRequest', 'Invalid input for ip_version. Reason: 5 is not in [4, 6].');
    expectFault(
      await post({ ip_version: 6, cidr: '10.0.0.0/24' }),
      400,
      'InvalidInput',
      "Invalid input for operation: cidr '10.0.0.0/24' does not match the ip_version '6'.",
    );
    expectFault(await post({}), 400, 'BadRequest', 'Bad subnets request: a subnetpool must be specified in the absence of a cidr.');
    expectFault(
      await post({ cidr: '10.0.0.0/31' }),
      400,
      'InvalidInput',
      'Invalid input for operation: Subnet has a prefix length that is incompatible with DHCP service enabled.',
    );
    expectFault(
      await post({ cidr: '10.0.0.0/24', gateway_ip: '10.0.0.255' }),
      400,
      'InvalidInput',
      'Invalid input for operation: Gateway is not valid on subnet.',
    );
    expectFault(
      await post({ cidr: '10.0.0.0/24', allocation_pools: [{ start: '10.0.0.2', end: '10.0.1.5' }] }),
      400,
      'OutOfBoundsAllocationPool',
      'The allocation pool 10.0.0.2-10.0.1.5 spans beyond the subnet cidr 10.0.0.0/24.',
    );
    expectFault(
      await post({
        cidr: '10.0.0.0/24',
        allocation_pools: [
          { start: '10.0.0.2', end: '10.0.0.20' },
          { start: '10.0.0.10', end: '10.0.0.30' },
        ],
      }),
      409,
      'OverlappingAllocationPools',
      'Found overlapping allocation pools: 10.0.0.2-10.0.0.20 10.0.0.10-10.0.0.30 for subnet 10.0.0.0/24.',
    );
    expectFault(
      await post({ cidr: '10.0.0.0/24', allocation_pools: [{ start: '10.0.0.1', end: '10.0.0.20' }] }),
      409,
      'GatewayConflictWithAllocationPools',
      'Gateway ip 10.0.0.1 conflicts with allocation pool 10.0.0.1-10.0.0.20.',
    );
    expectFault(
      await post({ cidr: '10.0.0.0/24', dns_nameservers: ['1.1.1.1', '1.1.1.2', '1.1.1.3', '1.1.1.4', '1.1.1.5', '1.1.1.6'] }),
      400,
      'DNSNameServersExhausted',
      'Unable to complete operation for new subnet. The number of DNS nameservers exceeds the limit 5.',
    );
    expectFault(
      await post({ cidr: '10.0.0.0/24', dns_nameservers: ['1.1.1.1', '1.1.1.1'] }),
      400,
      'HTTPBadRequest',
      "Invalid input for dns_nameservers. Reason: Duplicate nameserver '1.1.1.1'.",
    );
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/subnets`, {
        subnet: { network_id: 'f0000000-0000-4000-8000-000000000000', ip_version: 4, cidr: '10.0.0.0/24' },
      }),
      404,
      'NetworkNotFound',
    );
  });

  it('refuses overlapping CIDRs on one network but allows them across networks', async () => {
    const { net } = await network(cloud, cloud.demo, '10.50.0.0/16');
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/subnets`, { subnet: { network_id: net.id, ip_version: 4, cidr: '10.50.3.0/24' } }),
      400,
      'InvalidInput',
      `Invalid input for operation: Requested subnet with cidr: 10.50.3.0/24 for network: ${net.id} overlaps with another subnet.`,
    );
    const other = await network(cloud, cloud.demo, '10.50.3.0/24');
    expect(other.subnet.cidr).toBe('10.50.3.0/24');
  });

  it('updates pools, DNS and gateway; cidr is read-only', async () => {
    const { subnet } = await network(cloud, cloud.demo, '10.60.0.0/24');
    const res = await call(cloud.demo, 'PUT', `${cloud.v2}/subnets/${subnet.id}`, {
      subnet: { dns_nameservers: ['9.9.9.9'], allocation_pools: [{ start: '10.60.0.100', end: '10.60.0.200' }], name: 'renamed' },
    });
    expect(res.body.subnet).toMatchObject({
      dns_nameservers: ['9.9.9.9'],
      allocation_pools: [{ start: '10.60.0.100', end: '10.60.0.200' }],
      name: 'renamed',
      revision_number: 1,
    });
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/subnets/${subnet.id}`, { subnet: { cidr: '10.61.0.0/24' } }),
      400,
      'HTTPBadRequest',
      'Cannot update read-only attribute cidr',
    );
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/subnets/${subnet.id}`, { subnet: { gateway_ip: '10.60.0.150' } }),
      409,
      'GatewayConflictWithAllocationPools',
      'Gateway ip 10.60.0.150 conflicts with allocation pool 10.60.0.100-10.60.0.200.',
    );
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/subnets/${cloud.publicSubnet}`, { subnet: { name: 'mine' } }),
      403,
      'PolicyNotAuthorized',
      'rule:update_subnet is disallowed by policy',
    );
  });

  it('refuses to delete a subnet with allocated ports (SubnetInUse)', async () => {
    const { net, subnet } = await network(cloud, cloud.demo, '10.70.0.0/24');
    const port = await create(cloud.demo, `${cloud.v2}/ports`, 'port', { network_id: net.id });
    expectFault(
      await call(cloud.demo, 'DELETE', `${cloud.v2}/subnets/${subnet.id}`),
      409,
      'SubnetInUse',
      `Unable to complete operation on subnet ${subnet.id}: One or more ports have an IP allocation from this subnet.`,
    );
    await call(cloud.demo, 'DELETE', `${cloud.v2}/ports/${port.id}`);
    expect((await call(cloud.demo, 'DELETE', `${cloud.v2}/subnets/${subnet.id}`)).status).toBe(204);
  });

  it('finds subnets by network and CIDR, as CAPO does', async () => {
    const { net, subnet } = await network(cloud, cloud.demo, '10.80.0.0/24');
    const res = await call(cloud.demo, 'GET', `${cloud.v2}/subnets?network_id=${net.id}&cidr=10.80.0.0/24`);
    expect(res.body.subnets.map((s: { id: string }) => s.id)).toEqual([subnet.id]);
    expect((await call(cloud.demo, 'GET', `${cloud.v2}/subnets?network_id=${net.id}&ip_version=6`)).body.subnets).toEqual([]);
  });
});
