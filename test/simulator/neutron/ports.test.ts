import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, create, expectFault, network, startCloud, unique, type Cloud } from './setup.js';

let cloud: Cloud;
let defaultGroup: string;
beforeAll(async () => {
  cloud = await startCloud();
});
afterAll(async () => {
  await cloud.sim.close();
});

describe('the default security group', () => {
  it('appears on first use, once per project, with its four rules', async () => {
    // Only admin's exists yet (made when the seed created `public`); demo's comes with its first list.
    expect(cloud.sim.inventory().network?.securityGroups).toBe(1);
    const listed = await call(cloud.demo, 'GET', `${cloud.v2}/security-groups?name=default`);
    expect(cloud.sim.inventory().network?.securityGroups).toBe(2);
    expect(listed.body.security_groups).toHaveLength(1);
    const group = listed.body.security_groups[0];
    defaultGroup = group.id;
    expect(group).toMatchObject({ name: 'default', description: 'Default security group', stateful: true, shared: false, project_id: cloud.demo.projectId });
    const rules = group.security_group_rules.map((r: Record<string, unknown>) => [r.direction, r.ethertype, r.remote_group_id, r.protocol, r.remote_ip_prefix]);
    expect(rules).toEqual([
      ['ingress', 'IPv4', group.id, null, null],
      ['egress', 'IPv4', null, null, null],
      ['ingress', 'IPv6', group.id, null, null],
      ['egress', 'IPv6', null, null, null],
    ]);
    await create(cloud.demo, `${cloud.v2}/networks`, 'network', { name: unique('n') });
    const again = await call(cloud.admin, 'GET', `${cloud.v2}/security-groups?project_id=${cloud.demo.projectId}&name=default`);
    expect(again.body.security_groups.map((g: { id: string }) => g.id)).toEqual([group.id]);
  });

  it('is created by a network create too, and only an admin may delete it', async () => {
    const fresh = await call(cloud.admin, 'POST', `${cloud.v2}/networks`, {
      network: { name: unique('for-service'), project_id: 'f1e2d3c4b5a6978812345678abcdef01' },
    });
    expect(fresh.status).toBe(201);
    const groups = await call(cloud.admin, 'GET', `${cloud.v2}/security-groups?project_id=f1e2d3c4b5a6978812345678abcdef01`);
    expect(groups.body.security_groups.map((g: { name: string }) => g.name)).toEqual(['default']);
    expectFault(
      await call(cloud.demo, 'DELETE', `${cloud.v2}/security-groups/${defaultGroup}`),
      409,
      'SecurityGroupCannotRemoveDefault',
      'Insufficient rights for removing default security group.',
    );
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/security-groups/${defaultGroup}`, { security_group: { name: 'other' } }),
      409,
      'SecurityGroupCannotUpdateDefault',
      'Updating default security group not allowed.',
    );
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/security-groups`, { security_group: { name: 'Default' } }),
      409,
      'SecurityGroupDefaultAlreadyExists',
      'Default security group already exists.',
    );
    const other = groups.body.security_groups[0].id;
    expect((await call(cloud.admin, 'DELETE', `${cloud.v2}/security-groups/${other}`)).status).toBe(204);
  });
});

describe('security groups and rules', () => {
  it('creates groups with the two egress rules and finds them by name', async () => {
    const name = unique('sg');
    const res = await call(cloud.demo, 'POST', `${cloud.v2}/security-groups`, { security_group: { name, description: 'Cluster API managed group' } });
    expect(res.status).toBe(201);
    const sg = res.body.security_group;
    expect(sg).toMatchObject({ name, description: 'Cluster API managed group', stateful: true, tags: [], revision_number: 1 });
    expect(sg.security_group_rules.map((r: Record<string, unknown>) => [r.direction, r.ethertype])).toEqual([
      ['egress', 'IPv4'],
      ['egress', 'IPv6'],
    ]);
    expect((await call(cloud.demo, 'GET', `${cloud.v2}/security-groups?name=${name}`)).body.security_groups.map((g: { id: string }) => g.id)).toEqual([sg.id]);
    const rules = await call(cloud.demo, 'GET', `${cloud.v2}/security-group-rules?security_group_id=${sg.id}&direction=egress`);
    expect(rules.body.security_group_rules).toHaveLength(2);
  });

  it('creates rules, canonicalises them and rejects duplicates', async () => {
    const sg = await create(cloud.demo, `${cloud.v2}/security-groups`, 'security_group', { name: unique('rules') });
    const post = (attrs: Record<string, unknown>) =>
      call(cloud.demo, 'POST', `${cloud.v2}/security-group-rules`, { security_group_rule: { security_group_id: sg.id, direction: 'ingress', ...attrs } });
    const res = await post({ protocol: 'TCP', port_range_min: 6443, port_range_max: 6443, remote_ip_prefix: '10.0.0.5/24', description: 'Kubernetes API' });
    expect(res.status).toBe(201);
    expect(res.body.security_group_rule).toMatchObject({
      security_group_id: sg.id,
      direction: 'ingress',
      ethertype: 'IPv4',
      protocol: 'tcp',
      port_range_min: 6443,
      port_range_max: 6443,
      remote_ip_prefix: '10.0.0.5/24',
      normalized_cidr: '10.0.0.0/24',
      remote_group_id: null,
      description: 'Kubernetes API',
      project_id: cloud.demo.projectId,
    });
    const rule = res.body.security_group_rule.id;
    expectFault(
      await post({ protocol: '6', port_range_min: 6443, port_range_max: 6443, remote_ip_prefix: '10.0.0.5/24' }),
      409,
      'SecurityGroupRuleExists',
      `Security group rule already exists. Rule id is ${rule}.`,
    );
    const self = await post({ protocol: 'tcp', port_range_min: 2379, port_range_max: 2380, remote_group_id: sg.id });
    expect(self.body.security_group_rule.remote_group_id).toBe(sg.id);
    const bare = await post({ remote_ip_prefix: '192.168.1.10' });
    expect(bare.body.security_group_rule.remote_ip_prefix).toBe('192.168.1.10/32');
    const all = await post({ protocol: 'udp', port_range_min: 1, port_range_max: 65535 });
    expect(all.body.security_group_rule).toMatchObject({ port_range_min: null, port_range_max: null });
    const icmp6 = await post({ ethertype: 'ipv6', protocol: 'icmp' });
    expect(icmp6.body.security_group_rule).toMatchObject({ ethertype: 'IPv6', protocol: 'ipv6-icmp' });
    const after = await call(cloud.demo, 'GET', `${cloud.v2}/security-groups/${sg.id}`);
    expect(after.body.security_group.security_group_rules).toHaveLength(7);
    expect(after.body.security_group.revision_number).toBeGreaterThan(1);
    expect((await call(cloud.demo, 'DELETE', `${cloud.v2}/security-group-rules/${rule}`)).status).toBe(204);
    expectFault(
      await call(cloud.demo, 'GET', `${cloud.v2}/security-group-rules/${rule}`),
      404,
      'SecurityGroupRuleNotFound',
      `Security group rule ${rule} does not exist`,
    );
  });

  it('validates rules like Neutron', async () => {
    const sg = await create(cloud.demo, `${cloud.v2}/security-groups`, 'security_group', { name: unique('bad-rules') });
    const post = (attrs: Record<string, unknown>) =>
      call(cloud.demo, 'POST', `${cloud.v2}/security-group-rules`, { security_group_rule: { security_group_id: sg.id, direction: 'ingress', ...attrs } });
    expectFault(
      await post({ protocol: 'bogus' }),
      400,
      'SecurityGroupRuleInvalidProtocol',
      /^Security group rule protocol bogus not supported\. Only protocol values \[None, 'ah', 'dccp'.*'vrrp'\] and integer representations \[0 to 255\] are supported\.$/,
    );
    expectFault(await post({ protocol: '256' }), 400, 'SecurityGroupRuleInvalidProtocol');
    expectFault(
      await post({ port_range_min: 22, port_range_max: 22 }),
      400,
      'SecurityGroupProtocolRequiredWithPorts',
      'Must also specify protocol if port range is given.',
    );
    expectFault(
      await post({ protocol: 'tcp', port_range_min: 30, port_range_max: 20 }),
      400,
      'SecurityGroupInvalidPortRange',
      'For TCP/UDP protocols, port_range_min must be <= port_range_max',
    );
    expectFault(await post({ protocol: 'tcp', port_range_min: 0, port_range_max: 20 }), 400, 'SecurityGroupInvalidPortValue', 'Invalid value for port 0');
    expectFault(await post({ protocol: 'tcp', port_range_min: 70000 }), 400, 'SecurityGroupInvalidPortValue', 'Invalid value for port 70000');
    expectFault(
      await post({ protocol: 'gre', port_range_min: 1, port_range_max: 2 }),
      400,
      'SecurityGroupInvalidProtocolForPort',
      'Ports cannot be specified for protocol 47. Ports are only supported for DCCP, SCTP, TCP, UDP, UDPLITE.',
    );
    expectFault(
      await post({ protocol: 'icmp', port_range_max: 0 }),
      400,
      'SecurityGroupMissingIcmpType',
      'ICMP code (port-range-max) 0 is provided but ICMP type (port-range-min) is missing.',
    );
    expectFault(
      await post({ protocol: 'icmp', port_range_min: 300 }),
      400,
      'SecurityGroupInvalidIcmpValue',
      'Invalid value for ICMP type (port_range_min) 300. It must be 0 to 255.',
    );
    expectFault(
      await post({ remote_ip_prefix: '10.0.0.0/8', remote_group_id: sg.id }),
      400,
      'SecurityGroupMultipleRemoteEntites',
      'Only one of remote_ip_prefix or remote_group_id or remote_address_group_id may be provided.',
    );
    expectFault(
      await post({ ethertype: 'IPv6', remote_ip_prefix: '10.0.0.0/8' }),
      400,
      'SecurityGroupRuleParameterConflict',
      'Conflicting value ethertype IPv6 for CIDR 10.0.0.0/8',
    );
    expectFault(
      await post({ ethertype: 'IPv5' }),
      400,
      'SecurityGroupRuleInvalidEtherType',
      "Security group rule for ethertype 'IPv5' not supported. Allowed values are ['IPv4', 'IPv6'].",
    );
    expectFault(await post({ remote_ip_prefix: 'nope' }), 400, 'InvalidCIDR', 'Invalid CIDR nope given as IP prefix.');
    expectFault(await post({ protocol: 'ipv6-icmp' }), 400, 'SecurityGroupEthertypeConflictWithProtocol', 'Invalid ethertype IPv4 for protocol ipv6-icmp.');
    expectFault(await post({ direction: 'sideways' }), 400, 'HTTPBadRequest', "Invalid input for direction. Reason: sideways is not in ['ingress', 'egress'].");
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/security-group-rules`, { security_group_rule: { security_group_id: sg.id } }),
      400,
      'HTTPBadRequest',
      "Failed to parse request. Required attribute 'direction' not specified",
    );
    const missing = 'd0d0d0d0-0000-4000-8000-000000000000';
    expectFault(await post({ remote_group_id: missing }), 404, 'SecurityGroupNotFound', `Security group ${missing} does not exist`);
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/security-group-rules`, { security_group_rule: { security_group_id: missing, direction: 'egress' } }),
      404,
      'SecurityGroupNotFound',
    );
  });

  it('refuses to delete a group a port uses (SecurityGroupInUse), and cascades remote-group rules', async () => {
    const { net } = await network(cloud, cloud.demo, '10.90.0.0/24');
    const sg = await create(cloud.demo, `${cloud.v2}/security-groups`, 'security_group', { name: unique('in-use') });
    const other = await create(cloud.demo, `${cloud.v2}/security-groups`, 'security_group', { name: unique('other') });
    await create(cloud.demo, `${cloud.v2}/security-group-rules`, 'security_group_rule', {
      security_group_id: other.id,
      direction: 'ingress',
      remote_group_id: sg.id,
    });
    const port = await create(cloud.demo, `${cloud.v2}/ports`, 'port', { network_id: net.id, security_groups: [sg.id] });
    expectFault(await call(cloud.demo, 'DELETE', `${cloud.v2}/security-groups/${sg.id}`), 409, 'SecurityGroupInUse', `Security Group ${sg.id} in use.`);
    await call(cloud.demo, 'DELETE', `${cloud.v2}/ports/${port.id}`);
    expect((await call(cloud.demo, 'DELETE', `${cloud.v2}/security-groups/${sg.id}`)).status).toBe(204);
    const rest = await call(cloud.demo, 'GET', `${cloud.v2}/security-groups/${other.id}`);
    expect(rest.body.security_group.security_group_rules.map((r: { remote_group_id: string | null }) => r.remote_group_id)).toEqual([null, null]);
    expectFault(await call(cloud.demo, 'GET', `${cloud.v2}/security-groups/${sg.id}`), 404, 'SecurityGroupNotFound', `Security group ${sg.id} does not exist`);
  });
});

describe('ports', () => {
  it('allocates from the pools, takes the default group, and starts DOWN', async () => {
    const { net, subnet } = await network(cloud, cloud.demo, '10.100.0.0/24');
    const res = await call(cloud.demo, 'POST', `${cloud.v2}/ports`, { port: { network_id: net.id, name: 'p0', tags: ['a', 'b'] } });
    expect(res.status).toBe(201);
    expect(res.body.port).toMatchObject({
      name: 'p0',
      network_id: net.id,
      status: 'DOWN',
      admin_state_up: true,
      device_id: '',
      device_owner: '',
      fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.100.0.2' }],
      security_groups: [defaultGroup],
      port_security_enabled: true,
      allowed_address_pairs: [],
      'binding:vnic_type': 'normal',
      // Taken, and dropped, as ministack's Zed does without tag-creation.
      tags: [],
      revision_number: 1,
    });
    expect(res.body.port.mac_address).toMatch(/^fa:16:3e(:[0-9a-f]{2}){3}$/);
    expect(res.body.port).not.toHaveProperty('binding:host_id');
    const adminView = await call(cloud.admin, 'GET', `${cloud.v2}/ports/${res.body.port.id}`);
    expect(adminView.body.port).toMatchObject({ 'binding:host_id': '', 'binding:vif_type': 'unbound', 'binding:profile': {}, 'binding:vif_details': {} });
  });

  it('honours requested addresses and reports allocation errors', async () => {
    const { net, subnet } = await network(cloud, cloud.demo, '10.101.0.0/24');
    const other = await network(cloud, cloud.demo, '10.102.0.0/24');
    const post = (attrs: Record<string, unknown>) => call(cloud.demo, 'POST', `${cloud.v2}/ports`, { port: { network_id: net.id, ...attrs } });
    const fixed = await post({ fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.101.0.50' }] });
    expect(fixed.body.port.fixed_ips).toEqual([{ subnet_id: subnet.id, ip_address: '10.101.0.50' }]);
    const byIp = await post({ fixed_ips: [{ ip_address: '10.101.0.51' }] });
    expect(byIp.body.port.fixed_ips).toEqual([{ subnet_id: subnet.id, ip_address: '10.101.0.51' }]);
    expectFault(
      await post({ fixed_ips: [{ ip_address: '10.101.0.50' }] }),
      409,
      'IpAddressAlreadyAllocated',
      `IP address 10.101.0.50 already allocated in subnet ${subnet.id}`,
    );
    expectFault(
      await post({ fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.101.0.255' }] }),
      400,
      'InvalidIpForSubnet',
      'IP address 10.101.0.255 is not a valid IP for the specified subnet.',
    );
    expectFault(
      await post({ fixed_ips: [{ ip_address: '192.168.9.9' }] }),
      400,
      'InvalidIpForNetwork',
      'IP address 192.168.9.9 is not a valid IP for any of the subnets on the specified network.',
    );
    expectFault(
      await post({ fixed_ips: [{ subnet_id: other.subnet.id }] }),
      400,
      'InvalidInput',
      `Invalid input for operation: Failed to create port on network ${net.id}, because fixed_ips included invalid subnet ${other.subnet.id}.`,
    );
    expectFault(
      await post({ fixed_ips: [{ foo: 'bar' }] }),
      400,
      'HTTPBadRequest',
      "Invalid input for fixed_ips. Reason: Invalid data format for fixed IP: '{'foo': 'bar'}'.",
    );
    const none = await post({ fixed_ips: [] });
    expect(none.body.port.fixed_ips).toEqual([]);

    const tiny = await network(cloud, cloud.demo, '10.103.0.0/30');
    const first = await call(cloud.demo, 'POST', `${cloud.v2}/ports`, { port: { network_id: tiny.net.id } });
    expect(first.body.port.fixed_ips[0].ip_address).toBe('10.103.0.2');
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/ports`, { port: { network_id: tiny.net.id } }),
      409,
      'IpAddressGenerationFailure',
      `No more IP addresses available on network ${tiny.net.id}.`,
    );
  });

  it('enforces MAC uniqueness and port-security rules', async () => {
    const { net } = await network(cloud, cloud.demo, '10.104.0.0/24');
    const sg = await create(cloud.demo, `${cloud.v2}/security-groups`, 'security_group', { name: unique('ps') });
    const post = (attrs: Record<string, unknown>) => call(cloud.demo, 'POST', `${cloud.v2}/ports`, { port: { network_id: net.id, ...attrs } });
    const withMac = await post({ mac_address: 'FA:16:3E:00:00:01' });
    expect(withMac.body.port.mac_address).toBe('fa:16:3e:00:00:01');
    expectFault(
      await post({ mac_address: 'fa:16:3e:00:00:01' }),
      409,
      'MacAddressInUse',
      `Unable to complete operation for network ${net.id}. The mac address fa:16:3e:00:00:01 is in use.`,
    );
    expectFault(await post({ mac_address: 'zz' }), 400, 'HTTPBadRequest', "Invalid input for mac_address. Reason: 'zz' is not a valid MAC address.");
    const noSecurity = await post({ port_security_enabled: false });
    expect(noSecurity.body.port).toMatchObject({ port_security_enabled: false, security_groups: [] });
    expectFault(
      await post({ port_security_enabled: false, security_groups: [sg.id] }),
      400,
      'PortSecurityAndIPRequiredForSecurityGroups',
      'Port security must be enabled and port must have an IP address in order to use security groups.',
    );
    expectFault(
      await post({ port_security_enabled: false, allowed_address_pairs: [{ ip_address: '10.104.0.200' }] }),
      409,
      'AddressPairAndPortSecurityRequired',
      'Port Security must be enabled in order to have allowed address pairs on a port.',
    );
    const secured = await post({ security_groups: [sg.id], allowed_address_pairs: [{ ip_address: '10.104.0.0/28' }] });
    expect(secured.body.port.allowed_address_pairs).toEqual([{ ip_address: '10.104.0.0/28', mac_address: secured.body.port.mac_address }]);
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/ports/${secured.body.port.id}`, { port: { port_security_enabled: false } }),
      409,
      'PortSecurityPortHasSecurityGroup',
      'Port has security group associated. Cannot disable port security or IP address until security group is removed.',
    );
    const cleared = await call(cloud.demo, 'PUT', `${cloud.v2}/ports/${secured.body.port.id}`, {
      port: { port_security_enabled: false, security_groups: [], allowed_address_pairs: [] },
    });
    expect(cleared.body.port).toMatchObject({ port_security_enabled: false, security_groups: [], allowed_address_pairs: [] });
    const missing = 'abcdef00-0000-4000-8000-000000000000';
    expectFault(await post({ security_groups: [missing] }), 404, 'SecurityGroupNotFound', `Security group ${missing} does not exist`);
  });

  it('keeps bindings admin-only and binds to ACTIVE', async () => {
    const { net } = await network(cloud, cloud.demo, '10.105.0.0/24');
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/ports`, { port: { network_id: net.id, 'binding:host_id': 'ministack' } }),
      403,
      'PolicyNotAuthorized',
      '(rule:create_port and rule:create_port:binding:host_id) is disallowed by policy',
    );
    const port = await create(cloud.demo, `${cloud.v2}/ports`, 'port', { network_id: net.id, 'binding:vnic_type': 'direct' });
    expect(port['binding:vnic_type']).toBe('direct');
    const bound = await call(cloud.admin, 'PUT', `${cloud.v2}/ports/${port.id}`, {
      port: { 'binding:host_id': 'ministack', device_id: 'server-1', device_owner: 'compute:nova', 'binding:profile': { trusted: true } },
    });
    expect(bound.body.port).toMatchObject({
      status: 'ACTIVE',
      'binding:host_id': 'ministack',
      'binding:vif_type': 'ovs',
      'binding:profile': { trusted: true },
      revision_number: 2,
    });
    expectFault(
      await call(cloud.admin, 'PUT', `${cloud.v2}/ports/${port.id}`, { port: { mac_address: 'fa:16:3e:aa:bb:cc' } }),
      409,
      'PortBound',
      `Unable to complete operation on port ${port.id}, port is already bound, port type: ovs, old_mac ${port.mac_address}, new_mac fa:16:3e:aa:bb:cc.`,
    );
    const down = await call(cloud.admin, 'PUT', `${cloud.v2}/ports/${port.id}`, { port: { admin_state_up: false } });
    expect(down.body.port.status).toBe('DOWN');
    const unbound = await call(cloud.admin, 'PUT', `${cloud.v2}/ports/${port.id}`, { port: { 'binding:host_id': '', admin_state_up: true } });
    expect(unbound.body.port).toMatchObject({ status: 'DOWN', 'binding:vif_type': 'unbound' });
  });

  it('moves addresses on update, keeping the ones still asked for', async () => {
    const { net, subnet } = await network(cloud, cloud.demo, '10.106.0.0/24');
    const port = await create(cloud.demo, `${cloud.v2}/ports`, 'port', {
      network_id: net.id,
      fixed_ips: [{ ip_address: '10.106.0.10' }, { ip_address: '10.106.0.11' }],
    });
    const res = await call(cloud.demo, 'PUT', `${cloud.v2}/ports/${port.id}`, {
      port: { fixed_ips: [{ ip_address: '10.106.0.11' }, { subnet_id: subnet.id }] },
    });
    expect(res.body.port.fixed_ips).toEqual([
      { subnet_id: subnet.id, ip_address: '10.106.0.11' },
      { subnet_id: subnet.id, ip_address: '10.106.0.10' },
    ]);
    const moved = await call(cloud.demo, 'PUT', `${cloud.v2}/ports/${port.id}`, {
      port: { fixed_ips: [{ subnet_id: subnet.id }, { ip_address: '10.106.0.20' }] },
    });
    expect(moved.body.port.fixed_ips).toEqual([
      { subnet_id: subnet.id, ip_address: '10.106.0.10' },
      { subnet_id: subnet.id, ip_address: '10.106.0.20' },
    ]);
    const reuse = await create(cloud.demo, `${cloud.v2}/ports`, 'port', { network_id: net.id, fixed_ips: [{ ip_address: '10.106.0.11' }] });
    expect(reuse.fixed_ips[0].ip_address).toBe('10.106.0.11');
  });

  it('lets demo use the shared public network but not pick addresses or MACs on it', async () => {
    const port = await create(cloud.demo, `${cloud.v2}/ports`, 'port', { network_id: cloud.publicNetwork });
    expect(port.fixed_ips[0].subnet_id).toBe(cloud.publicSubnet);
    const bySubnet = await create(cloud.demo, `${cloud.v2}/ports`, 'port', { network_id: cloud.publicNetwork, fixed_ips: [{ subnet_id: cloud.publicSubnet }] });
    expect(bySubnet.fixed_ips).toHaveLength(1);
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/ports`, {
        port: { network_id: cloud.publicNetwork, fixed_ips: [{ subnet_id: cloud.publicSubnet, ip_address: '172.24.4.200' }] },
      }),
      403,
      'PolicyNotAuthorized',
      '(rule:create_port and (rule:create_port:fixed_ips and (rule:create_port:fixed_ips:subnet_id and rule:create_port:fixed_ips:ip_address))) is disallowed by policy',
    );
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/ports`, { port: { network_id: cloud.publicNetwork, mac_address: 'fa:16:3e:01:02:03' } }),
      403,
      'PolicyNotAuthorized',
      '(rule:create_port and rule:create_port:mac_address) is disallowed by policy',
    );
    const adminNet = await create(cloud.admin, `${cloud.v2}/networks`, 'network', { name: unique('admin-only') });
    expectFault(await call(cloud.demo, 'POST', `${cloud.v2}/ports`, { port: { network_id: adminNet.id } }), 404, 'NetworkNotFound');
    await call(cloud.demo, 'DELETE', `${cloud.v2}/ports/${port.id}`);
    await call(cloud.demo, 'DELETE', `${cloud.v2}/ports/${bySubnet.id}`);
  });

  it('filters by device, owner, network, fixed IPs, security groups and tags', async () => {
    const { net, subnet } = await network(cloud, cloud.demo, '10.107.0.0/24');
    const sg = await create(cloud.demo, `${cloud.v2}/security-groups`, 'security_group', { name: unique('flt') });
    const a = await create(cloud.demo, `${cloud.v2}/ports`, 'port', { network_id: net.id, name: 'a', device_id: 'srv-a', device_owner: 'compute:nova' });
    const b = await create(cloud.demo, `${cloud.v2}/ports`, 'port', { network_id: net.id, name: 'b', device_id: 'srv-b', security_groups: [sg.id] });
    await call(cloud.demo, 'PUT', `${cloud.v2}/ports/${a.id}/tags`, { tags: ['x'] });
    await call(cloud.demo, 'PUT', `${cloud.v2}/ports/${b.id}/tags`, { tags: ['x', 'y'] });
    const ids = async (query: string) => (await call(cloud.demo, 'GET', `${cloud.v2}/ports?${query}`)).body.ports.map((p: { id: string }) => p.id).sort();
    expect(await ids(`device_id=srv-a`)).toEqual([a.id]);
    expect(await ids(`device_owner=compute:nova&network_id=${net.id}`)).toEqual([a.id]);
    expect(await ids(`network_id=${net.id}&name=a&name=b`)).toEqual([a.id, b.id].sort());
    expect(await ids(`fixed_ips=ip_address=${b.fixed_ips[0].ip_address}`)).toEqual([b.id]);
    expect(await ids(`fixed_ips=subnet_id=${subnet.id}&fixed_ips=ip_address=${a.fixed_ips[0].ip_address}`)).toEqual([a.id]);
    expect(await ids(`fixed_ips=subnet_id=${subnet.id}&device_id=srv-b`)).toEqual([b.id]);
    expect(await ids(`fixed_ips=ip_address_substr=10.107.0.&network_id=${net.id}`)).toEqual([a.id, b.id].sort());
    expect(await ids(`security_groups=${sg.id}`)).toEqual([b.id]);
    expect(await ids(`network_id=${net.id}&tags=x,y`)).toEqual([b.id]);
    expect(await ids(`network_id=${net.id}&tags=x&tags=y`)).toEqual([b.id]);
    expect(await ids(`network_id=${net.id}&tags-any=y,z`)).toEqual([b.id]);
    expect(await ids(`network_id=${net.id}&not-tags=x,y`)).toEqual([a.id]);
    expect(await ids(`network_id=${net.id}&not-tags-any=y`)).toEqual([a.id]);
    expect(await ids(`device_id=srv-a&name=`)).toEqual([]);
    expectFault(
      await call(cloud.demo, 'GET', `${cloud.v2}/ports?fixed_ips=10.0.0.1`),
      400,
      'InvalidInput',
      "Invalid input for operation: '10.0.0.1' is not of the form <key>=[value].",
    );
  });

  it('answers PortNotFound and lets network owners see but not change foreign ports', async () => {
    const missing = '0badf00d-0000-4000-8000-000000000000';
    expectFault(await call(cloud.demo, 'GET', `${cloud.v2}/ports/${missing}`), 404, 'PortNotFound', `Port ${missing} could not be found.`);
    expectFault(await call(cloud.demo, 'DELETE', `${cloud.v2}/ports/${missing}`), 404, 'PortNotFound');
    const { net } = await network(cloud, cloud.demo, '10.108.0.0/24');
    const foreign = await create(cloud.admin, `${cloud.v2}/ports`, 'port', { network_id: net.id, project_id: cloud.admin.projectId });
    expect((await call(cloud.demo, 'GET', `${cloud.v2}/ports/${foreign.id}`)).status).toBe(200);
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/ports/${foreign.id}`, { port: { name: 'x' } }),
      403,
      'PolicyNotAuthorized',
      'rule:update_port is disallowed by policy',
    );
    expectFault(await call(cloud.demo, 'DELETE', `${cloud.v2}/ports/${foreign.id}`), 403, 'PolicyNotAuthorized', 'rule:delete_port is disallowed by policy');
    expect((await call(cloud.admin, 'DELETE', `${cloud.v2}/ports/${foreign.id}`)).status).toBe(204);
  });
});
