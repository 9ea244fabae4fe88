import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, create, expectFault, network, startCloud, unique, type Cloud } from './setup.js';

let cloud: Cloud;
beforeAll(async () => {
  cloud = await startCloud();
});
afterAll(async () => {
  await cloud.sim.close();
});

const router = (attrs: Record<string, unknown> = {}) => create(cloud.demo, `${cloud.v2}/routers`, 'router', { name: unique('router'), ...attrs });
const gateway = () => ({ external_gateway_info: { network_id: cloud.publicNetwork } });

describe('routers', () => {
  it('takes an external gateway with an address on the public subnet and a hidden gateway port', async () => {
    const r = await router(gateway());
    expect(r).toMatchObject({
      status: 'ACTIVE',
      admin_state_up: true,
      routes: [],
      revision_number: 1,
      external_gateway_info: { network_id: cloud.publicNetwork, enable_snat: true },
    });
    const [ip] = r.external_gateway_info.external_fixed_ips;
    expect(ip.subnet_id).toBe(cloud.publicSubnet);
    expect(ip.ip_address).toMatch(/^172\.24\.4\.\d+$/);
    expect(r).not.toHaveProperty('distributed');
    // The gateway port belongs to no project: only admins see it.
    expect((await call(cloud.demo, 'GET', `${cloud.v2}/ports?device_id=${r.id}`)).body.ports).toEqual([]);
    const gw = await call(cloud.admin, 'GET', `${cloud.v2}/ports?device_id=${r.id}&device_owner=network:router_gateway`);
    expect(gw.body.ports).toHaveLength(1);
    expect(gw.body.ports[0]).toMatchObject({ project_id: '', network_id: cloud.publicNetwork, fixed_ips: [ip], security_groups: [] });
    expectFault(await call(cloud.demo, 'DELETE', `${cloud.v2}/ports/${gw.body.ports[0].id}`), 404, 'PortNotFound');
    expectFault(
      await call(cloud.admin, 'DELETE', `${cloud.v2}/ports/${gw.body.ports[0].id}`),
      409,
      'ServicePortInUse',
      `Port ${gw.body.ports[0].id} cannot be deleted directly via the port API: has device owner network:router_gateway.`,
    );

    const cleared = await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}`, { router: { external_gateway_info: {} } });
    expect(cleared.body.router.external_gateway_info).toBeNull();
    expect((await call(cloud.admin, 'GET', `${cloud.v2}/ports?device_id=${r.id}`)).body.ports).toEqual([]);
  });

  it('keeps external_fixed_ips and enable_snat for admins, and refuses non-external gateways', async () => {
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/routers`, {
        router: { external_gateway_info: { network_id: cloud.publicNetwork, external_fixed_ips: [{ ip_address: '172.24.4.99' }] } },
      }),
      403,
      'PolicyNotAuthorized',
      '(rule:create_router and (rule:create_router:external_gateway_info and (rule:create_router:external_gateway_info:network_id and rule:create_router:external_gateway_info:external_fixed_ips))) is disallowed by policy',
    );
    const fixed = await create(cloud.admin, `${cloud.v2}/routers`, 'router', {
      external_gateway_info: {
        network_id: cloud.publicNetwork,
        enable_snat: false,
        external_fixed_ips: [{ subnet_id: cloud.publicSubnet, ip_address: '172.24.4.99' }],
      },
    });
    expect(fixed.external_gateway_info).toEqual({
      network_id: cloud.publicNetwork,
      enable_snat: false,
      external_fixed_ips: [{ subnet_id: cloud.publicSubnet, ip_address: '172.24.4.99' }],
    });
    expect(fixed).toMatchObject({ distributed: false, ha: false });
    expectFault(
      await call(cloud.admin, 'POST', `${cloud.v2}/routers`, {
        router: { external_gateway_info: { network_id: cloud.publicNetwork, external_fixed_ips: [{ ip_address: '172.24.4.1' }] } },
      }),
      400,
      'BadRequest',
      'Bad router request: External IP 172.24.4.1 is the same as the gateway IP.',
    );
    const { net } = await network(cloud, cloud.demo, '10.10.0.0/24');
    const before = (await call(cloud.demo, 'GET', `${cloud.v2}/routers`)).body.routers.length;
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/routers`, { router: { external_gateway_info: { network_id: net.id } } }),
      400,
      'BadRequest',
      `Bad router request: Network ${net.id} is not an external network.`,
    );
    expect((await call(cloud.demo, 'GET', `${cloud.v2}/routers`)).body.routers.length).toBe(before);
    const missing = 'aaaaaaaa-0000-4000-8000-000000000000';
    expectFault(await call(cloud.demo, 'GET', `${cloud.v2}/routers/${missing}`), 404, 'RouterNotFound', `Router ${missing} could not be found`);
  });

  it('adds an interface on the subnet gateway address and refuses overlapping ones', async () => {
    const r = await router(gateway());
    const a = await network(cloud, cloud.demo, '10.20.0.0/24');
    const res = await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}/add_router_interface`, { subnet_id: a.subnet.id });
    expect(res.status).toBe(200);
    // Zed answers exactly these keys: tenant_id, but no project_id.
    expect(Object.keys(res.body).sort()).toEqual(['id', 'network_id', 'port_id', 'subnet_id', 'subnet_ids', 'tenant_id']);
    expect(res.body).toMatchObject({ id: r.id, network_id: a.net.id, subnet_id: a.subnet.id, subnet_ids: [a.subnet.id], tenant_id: cloud.demo.projectId });
    const port = await call(cloud.demo, 'GET', `${cloud.v2}/ports/${res.body.port_id}`);
    expect(port.body.port).toMatchObject({
      device_id: r.id,
      device_owner: 'network:router_interface',
      fixed_ips: [{ subnet_id: a.subnet.id, ip_address: '10.20.0.1' }],
      security_groups: [],
      status: 'DOWN',
      name: '',
    });
    // CAPO looks interfaces up by device_id.
    expect((await call(cloud.demo, 'GET', `${cloud.v2}/ports?device_id=${r.id}`)).body.ports.map((p: { id: string }) => p.id)).toEqual([res.body.port_id]);

    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}/add_router_interface`, { subnet_id: a.subnet.id }),
      400,
      'BadRequest',
      `Bad router request: Router already has a port on subnet ${a.subnet.id}.`,
    );
    const b = await network(cloud, cloud.demo, '10.20.0.0/16');
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}/add_router_interface`, { subnet_id: b.subnet.id }),
      400,
      'BadRequest',
      `Bad router request: Cidr 10.20.0.0/16 of subnet ${b.subnet.id} overlaps with cidr 10.20.0.0/24 of subnet ${a.subnet.id}.`,
    );
    const c = await network(cloud, cloud.demo, '172.24.4.0/25');
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}/add_router_interface`, { subnet_id: c.subnet.id }),
      400,
      'BadRequest',
      `Bad router request: Cidr 172.24.4.0/25 of subnet ${c.subnet.id} overlaps with cidr 172.24.4.0/24 of subnet ${cloud.publicSubnet}.`,
    );
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}/add_router_interface`, {}),
      400,
      'BadRequest',
      'Bad router request: Either subnet_id or port_id must be specified.',
    );
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}/add_router_interface`, { subnet_id: a.subnet.id, port_id: res.body.port_id }),
      400,
      'BadRequest',
      'Bad router request: Cannot specify both subnet-id and port-id.',
    );
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}/add_router_interface`, { subnet_id: 'x' }),
      400,
      'BadRequest',
      "Bad router request: 'x' is not a valid UUID.",
    );
    const noGw = await create(cloud.demo, `${cloud.v2}/subnets`, 'subnet', { network_id: b.net.id, ip_version: 4, cidr: '10.21.0.0/24', gateway_ip: null });
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}/add_router_interface`, { subnet_id: noGw.id }),
      400,
      'BadRequest',
      'Bad router request: Subnet for router interface must have a gateway IP.',
    );
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}/add_router_interface`, { subnet_id: cloud.publicSubnet }),
      400,
      'BadRequest',
      `Bad router request: Cannot add interface to router because subnet ${cloud.publicSubnet} is not owned by project making the request.`,
    );
  });

  it('adds an interface by port; a port with a device is in use', async () => {
    const r = await router();
    const { net, subnet } = await network(cloud, cloud.demo, '10.22.0.0/24');
    const port = await create(cloud.demo, `${cloud.v2}/ports`, 'port', {
      network_id: net.id,
      fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.22.0.254' }],
    });
    const res = await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}/add_router_interface`, { port_id: port.id });
    expect(res.body).toMatchObject({ port_id: port.id, subnet_id: subnet.id });
    const after = await call(cloud.demo, 'GET', `${cloud.v2}/ports/${port.id}`);
    expect(after.body.port).toMatchObject({ device_id: r.id, device_owner: 'network:router_interface' });
    const other = await router();
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${other.id}/add_router_interface`, { port_id: port.id }),
      409,
      'PortInUse',
      `Unable to complete operation on port ${port.id} for network ${net.id}. Port already has an attached device ${r.id}.`,
    );
    const removed = await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}/remove_router_interface`, { port_id: port.id });
    expect(removed.body).toMatchObject({ id: r.id, port_id: port.id, subnet_ids: [subnet.id] });
    expectFault(await call(cloud.demo, 'GET', `${cloud.v2}/ports/${port.id}`), 404, 'PortNotFound');
  });

  it('guards interfaces: port delete, subnet delete and router delete answer 409 while attached', async () => {
    const r = await router(gateway());
    const { net, subnet } = await network(cloud, cloud.demo, '10.23.0.0/24');
    const intf = (await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}/add_router_interface`, { subnet_id: subnet.id })).body;
    expectFault(
      await call(cloud.demo, 'DELETE', `${cloud.v2}/ports/${intf.port_id}`),
      409,
      'ServicePortInUse',
      `Port ${intf.port_id} cannot be deleted directly via the port API: has device owner network:router_interface.`,
    );
    expectFault(
      await call(cloud.demo, 'DELETE', `${cloud.v2}/subnets/${subnet.id}`),
      409,
      'SubnetInUse',
      `Unable to complete operation on subnet ${subnet.id}: One or more ports have an IP allocation from this subnet.`,
    );
    expectFault(await call(cloud.demo, 'DELETE', `${cloud.v2}/networks/${net.id}`), 409, 'NetworkInUse');
    expectFault(
      await call(cloud.demo, 'DELETE', `${cloud.v2}/routers/${r.id}`),
      409,
      'RouterInUse',
      `Router ${r.id} has ports still attached: ${intf.port_id}`,
    );
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}/remove_router_interface`, { port_id: subnet.id }),
      404,
      'RouterInterfaceNotFound',
      `Router ${r.id} does not have an interface with id ${subnet.id}`,
    );
    const other = await network(cloud, cloud.demo, '10.24.0.0/24');
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}/remove_router_interface`, { subnet_id: other.subnet.id }),
      404,
      'RouterInterfaceNotFoundForSubnet',
      `Router ${r.id} has no interface on subnet ${other.subnet.id}`,
    );
    // CAPO's deletion order: interface, router, network.
    expect((await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}/remove_router_interface`, { subnet_id: subnet.id })).status).toBe(200);
    expect((await call(cloud.demo, 'DELETE', `${cloud.v2}/routers/${r.id}`)).status).toBe(204);
    expect((await call(cloud.demo, 'DELETE', `${cloud.v2}/networks/${net.id}`)).status).toBe(204);
  });

  it('validates extra routes against the attached subnets', async () => {
    const r = await router(gateway());
    const { subnet } = await network(cloud, cloud.demo, '10.25.0.0/24');
    await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}/add_router_interface`, { subnet_id: subnet.id });
    const ok = await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}`, { router: { routes: [{ destination: '192.168.0.0/16', nexthop: '10.25.0.9' }] } });
    expect(ok.body.router.routes).toEqual([{ destination: '192.168.0.0/16', nexthop: '10.25.0.9' }]);
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}`, { router: { routes: [{ destination: '192.168.0.0/16', nexthop: '10.99.0.9' }] } }),
      400,
      'InvalidRoutes',
      "Invalid format for routes: [{'destination': '192.168.0.0/16', 'nexthop': '10.99.0.9'}], the nexthop is not connected with router",
    );
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}/remove_router_interface`, { subnet_id: subnet.id }),
      409,
      'RouterInterfaceInUseByRoute',
      `Router interface for subnet ${subnet.id} on router ${r.id} cannot be deleted, as it is required by one or more routes.`,
    );
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/routers`, { router: { routes: [] } }),
      400,
      'HTTPBadRequest',
      "Attribute 'routes' not allowed in POST",
    );
  });
});

describe('floating IPs', () => {
  async function topology(cidr: string) {
    const r = await router(gateway());
    const { net, subnet } = await network(cloud, cloud.demo, cidr);
    await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}/add_router_interface`, { subnet_id: subnet.id });
    const port = await create(cloud.demo, `${cloud.v2}/ports`, 'port', { network_id: net.id, name: unique('vm') });
    return { r, net, subnet, port };
  }

  it('allocates from the external subnet, associates (ACTIVE) and disassociates (DOWN)', async () => {
    const { r, port } = await topology('10.30.0.0/24');
    const res = await call(cloud.demo, 'POST', `${cloud.v2}/floatingips`, {
      floatingip: { floating_network_id: cloud.publicNetwork, description: 'Created by cluster-api-provider-openstack cluster ns-c' },
    });
    expect(res.status).toBe(201);
    const fip = res.body.floatingip;
    expect(fip).toMatchObject({
      floating_network_id: cloud.publicNetwork,
      status: 'DOWN',
      port_id: null,
      fixed_ip_address: null,
      router_id: null,
      port_details: null,
      description: 'Created by cluster-api-provider-openstack cluster ns-c',
      project_id: cloud.demo.projectId,
    });
    expect(fip.floating_ip_address).toMatch(/^172\.24\.4\.\d+$/);
    const assoc = await call(cloud.demo, 'PUT', `${cloud.v2}/floatingips/${fip.id}`, { floatingip: { port_id: port.id } });
    expect(assoc.body.floatingip).toMatchObject({
      port_id: port.id,
      fixed_ip_address: port.fixed_ips[0].ip_address,
      router_id: r.id,
      status: 'ACTIVE',
      port_details: {
        name: port.name,
        network_id: port.network_id,
        mac_address: port.mac_address,
        status: 'DOWN',
        device_id: '',
        device_owner: '',
        admin_state_up: true,
      },
    });
    const byPort = await call(cloud.demo, 'GET', `${cloud.v2}/floatingips?port_id=${port.id}`);
    expect(byPort.body.floatingips.map((f: { id: string }) => f.id)).toEqual([fip.id]);
    const byAddress = await call(cloud.demo, 'GET', `${cloud.v2}/floatingips?floating_ip_address=${fip.floating_ip_address}`);
    expect(byAddress.body.floatingips).toHaveLength(1);
    expect((await call(cloud.demo, 'GET', `${cloud.v2}/floatingips?floating_network_id=${cloud.publicNetwork}&description=nope`)).body.floatingips).toEqual([]);

    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}/remove_router_interface`, { subnet_id: port.fixed_ips[0].subnet_id }),
      409,
      'RouterInterfaceInUseByFloatingIP',
      `Router interface for subnet ${port.fixed_ips[0].subnet_id} on router ${r.id} cannot be deleted, as it is required by one or more floating IPs.`,
    );
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}`, { router: { external_gateway_info: {} } }),
      409,
      'RouterExternalGatewayInUseByFloatingIp',
      `Gateway cannot be updated for router ${r.id}, since a gateway to external network ${cloud.publicNetwork} is required by one or more floating IPs.`,
    );
    const second = await create(cloud.demo, `${cloud.v2}/floatingips`, 'floatingip', { floating_network_id: cloud.publicNetwork });
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/floatingips/${second.id}`, { floatingip: { port_id: port.id } }),
      409,
      'FloatingIPPortAlreadyAssociated',
      `Cannot associate floating IP ${second.floating_ip_address} (${second.id}) with port ${port.id} using fixed IP ${port.fixed_ips[0].ip_address}, as that fixed IP already has a floating IP on external network ${cloud.publicNetwork}.`,
    );

    const dis = await call(cloud.demo, 'PUT', `${cloud.v2}/floatingips/${fip.id}`, { floatingip: { port_id: null } });
    expect(dis.body.floatingip).toMatchObject({ port_id: null, fixed_ip_address: null, router_id: null, status: 'DOWN' });
    expect((await call(cloud.demo, 'DELETE', `${cloud.v2}/floatingips/${fip.id}`)).status).toBe(204);
    expectFault(await call(cloud.demo, 'GET', `${cloud.v2}/floatingips/${fip.id}`), 404, 'FloatingIPNotFound', `Floating IP ${fip.id} could not be found`);
    await call(cloud.demo, 'DELETE', `${cloud.v2}/floatingips/${second.id}`);
  });

  it('requires a router between the port subnet and the external network', async () => {
    const { net, subnet } = await network(cloud, cloud.demo, '10.31.0.0/24');
    const port = await create(cloud.demo, `${cloud.v2}/ports`, 'port', { network_id: net.id });
    const message = `External network ${cloud.publicNetwork} is not reachable from subnet ${subnet.id}.  Therefore, cannot associate Port ${port.id} with a Floating IP.`;
    const before = (await call(cloud.demo, 'GET', `${cloud.v2}/floatingips`)).body.floatingips.length;
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/floatingips`, { floatingip: { floating_network_id: cloud.publicNetwork, port_id: port.id } }),
      404,
      'ExternalGatewayForFloatingIPNotFound',
      message,
    );
    expect((await call(cloud.demo, 'GET', `${cloud.v2}/floatingips`)).body.floatingips.length).toBe(before);
    // A router with an interface but no gateway does not help.
    const r = await router();
    await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}/add_router_interface`, { subnet_id: subnet.id });
    const fip = await create(cloud.demo, `${cloud.v2}/floatingips`, 'floatingip', { floating_network_id: cloud.publicNetwork });
    expectFault(
      await call(cloud.demo, 'PUT', `${cloud.v2}/floatingips/${fip.id}`, { floatingip: { port_id: port.id } }),
      404,
      'ExternalGatewayForFloatingIPNotFound',
      message,
    );
    await call(cloud.demo, 'PUT', `${cloud.v2}/routers/${r.id}`, { router: gateway() });
    const ok = await call(cloud.demo, 'PUT', `${cloud.v2}/floatingips/${fip.id}`, { floatingip: { port_id: port.id } });
    expect(ok.body.floatingip).toMatchObject({ status: 'ACTIVE', router_id: r.id });
    // Deleting the port disassociates its floating IP.
    await call(cloud.demo, 'DELETE', `${cloud.v2}/ports/${port.id}`);
    const after = await call(cloud.demo, 'GET', `${cloud.v2}/floatingips/${fip.id}`);
    expect(after.body.floatingip).toMatchObject({ port_id: null, status: 'DOWN', router_id: null });
  });

  it('rejects other networks, foreign ports and fixed addresses without ports', async () => {
    const { net, port } = await topology('10.32.0.0/24');
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/floatingips`, { floatingip: { floating_network_id: net.id } }),
      400,
      'BadRequest',
      `Bad floatingip request: Network ${net.id} is not a valid external network.`,
    );
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/floatingips`, { floatingip: { floating_network_id: cloud.publicNetwork, fixed_ip_address: '10.32.0.5' } }),
      400,
      'BadRequest',
      'Bad floatingip request: fixed_ip_address cannot be specified without a port_id.',
    );
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/floatingips`, {
        floatingip: { floating_network_id: cloud.publicNetwork, port_id: port.id, fixed_ip_address: '10.32.0.250' },
      }),
      400,
      'BadRequest',
      `Bad floatingip request: Port ${port.id} does not have fixed ip 10.32.0.250.`,
    );
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/floatingips`, {
        floatingip: { floating_network_id: cloud.publicNetwork, floating_ip_address: '172.24.4.200' },
      }),
      403,
      'PolicyNotAuthorized',
      '(rule:create_floatingip and rule:create_floatingip:floating_ip_address) is disallowed by policy',
    );
    expectFault(
      await call(cloud.demo, 'POST', `${cloud.v2}/floatingips`, { floatingip: {} }),
      400,
      'HTTPBadRequest',
      "Failed to parse request. Required attribute 'floating_network_id' not specified",
    );
    const chosen = await create(cloud.admin, `${cloud.v2}/floatingips`, 'floatingip', {
      floating_network_id: cloud.publicNetwork,
      floating_ip_address: '172.24.4.200',
    });
    expect(chosen.floating_ip_address).toBe('172.24.4.200');
    expectFault(
      await call(cloud.admin, 'POST', `${cloud.v2}/floatingips`, {
        floatingip: { floating_network_id: cloud.publicNetwork, floating_ip_address: '172.24.4.200' },
      }),
      409,
      'IpAddressAlreadyAllocated',
      `IP address 172.24.4.200 already allocated in subnet ${cloud.publicSubnet}`,
    );
    expectFault(
      await call(cloud.admin, 'PUT', `${cloud.v2}/floatingips/${chosen.id}`, { floatingip: { floating_network_id: net.id } }),
      400,
      'HTTPBadRequest',
      'Cannot update read-only attribute floating_network_id',
    );
    expectFault(await call(cloud.demo, 'PUT', `${cloud.v2}/floatingips/${chosen.id}`, { floatingip: { port_id: port.id } }), 404, 'FloatingIPNotFound');
    const foreignPort = await create(cloud.admin, `${cloud.v2}/ports`, 'port', { network_id: cloud.publicNetwork });
    const mine = await create(cloud.demo, `${cloud.v2}/floatingips`, 'floatingip', { floating_network_id: cloud.publicNetwork });
    expectFault(await call(cloud.demo, 'PUT', `${cloud.v2}/floatingips/${mine.id}`, { floatingip: { port_id: foreignPort.id } }), 404, 'PortNotFound');
  });
});
