/**
 * A simulated cloud kept in a state file (SimulatorOptions.stateFile): closed and started again
 * on the same file, it answers for the same resources with the same ids, what was in transition
 * settles, credentials still work, new resources do not collide with restored ones, seeds are not
 * doubled, and a file that cannot be read fails the start naming it.
 */
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/host.js';
import { call, login, start, waitFor, type Session } from './helpers.js';

/** Long enough that a create answered just before close() is still in transition when saved. */
const transitionDelayMs = 300;

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'capo-simulator-state-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const urls = (sim: Simulator, session: Session) => ({
  network: `${sim.url}/network/v2.0`,
  compute: `${sim.url}/compute/v2.1`,
  lbaas: `${sim.url}/load-balancer/v2/lbaas`,
  image: `${sim.url}/image/v2`,
  volume: `${sim.url}/volume/v3/${session.projectId}`,
});

/** POST and the created object, failing on anything but success. */
async function created(session: Session, url: string, body: unknown, key: string): Promise<any> {
  const res = await call(session, 'POST', url, body);
  if (res.status >= 300) throw new Error(`POST ${url}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body[key];
}

async function statusOf(session: Session, url: string, key: string, field = 'status'): Promise<string> {
  return (await call(session, 'GET', url)).body[key][field];
}

const until = (session: Session, url: string, key: string, wanted: string, field = 'status') =>
  waitFor(async () => ((await statusOf(session, url, key, field)) === wanted ? true : undefined));

describe('a simulated cloud kept in a state file', () => {
  const stateFile = () => path.join(tmp, 'cloud', 'state.json');
  /** What the first cloud made, by name, checked against the second. */
  const made: Record<string, any> = {};

  it('saves every service and restores it with the same ids, settling what was in transition', async () => {
    const first = await start({ stateFile: stateFile(), transitionDelayMs });
    let demo = await login(first);
    let admin = await login(first, 'admin');
    let u = urls(first, demo);
    made.demo = demo;

    // Keystone: an application credential.
    made.appCred = await created(
      demo,
      `${first.url}/identity/v3/users/${demo.userId}/application_credentials`,
      { application_credential: { name: 'kept', secret: 'kept-secret' } },
      'application_credential',
    );

    // Neutron: a network with a subnet, a port, a router to `public`, a group with a rule, a floating IP, a trunk, a tag and a quota.
    made.public = (await call(demo, 'GET', `${u.network}/networks?name=public`)).body.networks[0];
    made.network = await created(demo, `${u.network}/networks`, { network: { name: 'kept' } }, 'network');
    made.subnet = await created(demo, `${u.network}/subnets`, { subnet: { network_id: made.network.id, ip_version: 4, cidr: '10.6.0.0/24' } }, 'subnet');
    made.port = await created(demo, `${u.network}/ports`, { port: { network_id: made.network.id, name: 'kept' } }, 'port');
    made.router = await created(demo, `${u.network}/routers`, { router: { name: 'kept', external_gateway_info: { network_id: made.public.id } } }, 'router');
    expect((await call(demo, 'PUT', `${u.network}/routers/${made.router.id}/add_router_interface`, { subnet_id: made.subnet.id })).status).toBe(200);
    made.group = await created(demo, `${u.network}/security-groups`, { security_group: { name: 'kept' } }, 'security_group');
    made.rule = await created(
      demo,
      `${u.network}/security-group-rules`,
      { security_group_rule: { security_group_id: made.group.id, direction: 'ingress', protocol: 'tcp', port_range_min: 22, port_range_max: 22 } },
      'security_group_rule',
    );
    made.floatingIp = await created(
      demo,
      `${u.network}/floatingips`,
      { floatingip: { floating_network_id: made.public.id, port_id: made.port.id } },
      'floatingip',
    );
    made.trunk = await created(demo, `${u.network}/trunks`, { trunk: { port_id: made.port.id, name: 'kept' } }, 'trunk');
    expect((await call(demo, 'PUT', `${u.network}/networks/${made.network.id}/tags/kept-tag`)).status).toBe(201);
    expect((await call(admin, 'PUT', `${u.network}/quotas/${demo.projectId}`, { quota: { port: 321 } })).status).toBe(200);

    // Nova: a flavor, a keypair, a server group, a server made ACTIVE; the host's quota API.
    made.flavor = await created(admin, `${u.compute}/flavors`, { flavor: { name: 'kept.flavor', ram: 1024, vcpus: 1, disk: 5 } }, 'flavor');
    made.keypair = await created(demo, `${u.compute}/os-keypairs`, { keypair: { name: 'kept' } }, 'keypair');
    made.keypairId = (await call(demo, 'GET', `${u.compute}/os-keypairs/kept`)).body.keypair.id;
    made.serverGroup = await created(demo, `${u.compute}/os-server-groups`, { server_group: { name: 'kept', policies: ['anti-affinity'] } }, 'server_group');
    made.image = (await call(demo, 'GET', `${u.image}/images?name=ubuntu-22.04`)).body.images[0];
    const serverBody = (name: string) => ({ server: { name, flavorRef: '1', imageRef: made.image.id, networks: [{ uuid: made.network.id }] } });
    made.server = await created(demo, `${u.compute}/servers`, serverBody('kept'), 'server');
    await until(demo, `${u.compute}/servers/${made.server.id}`, 'server', 'ACTIVE');
    first.setQuota('demo', 'instances', 7);
    first.setQuota('demo', 'cores', Infinity);

    // Octavia: a load balancer with a listener, made ACTIVE.
    made.lb = await created(demo, `${u.lbaas}/loadbalancers`, { loadbalancer: { name: 'kept', vip_subnet_id: made.subnet.id } }, 'loadbalancer');
    await until(demo, `${u.lbaas}/loadbalancers/${made.lb.id}`, 'loadbalancer', 'ACTIVE', 'provisioning_status');
    made.listener = await created(
      demo,
      `${u.lbaas}/listeners`,
      { listener: { loadbalancer_id: made.lb.id, protocol: 'TCP', protocol_port: 6443 } },
      'listener',
    );
    await until(demo, `${u.lbaas}/loadbalancers/${made.lb.id}`, 'loadbalancer', 'ACTIVE', 'provisioning_status');

    // Glance: an image with data.
    const image = await call(demo, 'POST', `${u.image}/images`, { name: 'kept', disk_format: 'raw', container_format: 'bare' });
    made.uploaded = image.body;
    made.imageData = Buffer.from('kept image data '.repeat(1000));
    const upload = await fetch(`${u.image}/images/${made.uploaded.id}/file`, {
      method: 'PUT',
      headers: { 'x-auth-token': demo.token, 'content-type': 'application/octet-stream' },
      body: made.imageData,
    });
    expect(upload.status).toBe(204);

    // Cinder: a volume made available.
    made.volume = await created(demo, `${u.volume}/volumes`, { volume: { size: 1, name: 'kept' } }, 'volume');
    await until(demo, `${u.volume}/volumes/${made.volume.id}`, 'volume', 'available');

    // In transition when the cloud stops: a server building, a pool PENDING_CREATE (its load balancer PENDING_UPDATE), a volume creating.
    made.building = await created(demo, `${u.compute}/servers`, serverBody('building'), 'server');
    made.pool = await created(demo, `${u.lbaas}/pools`, { pool: { loadbalancer_id: made.lb.id, protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' } }, 'pool');
    made.creating = await created(demo, `${u.volume}/volumes`, { volume: { size: 1, name: 'creating' } }, 'volume');
    await first.close();

    const saved = JSON.parse(await readFile(stateFile(), 'utf8'));
    expect(saved.services.compute.servers.find((s: any) => s.id === made.building.id).vmState).toBe('building');
    expect(saved.services['load-balancer'].pool.find((p: any) => p.id === made.pool.id).provisioningStatus).toBe('PENDING_CREATE');
    expect(saved.services['block-storage'].volumes.find((v: any) => v.id === made.creating.id).status).toBe('creating');
    expect((await stat(stateFile())).mode & 0o777).toBe(0o600);
    // Image data beside the state: the seeded image's and the upload's.
    expect(await readdir(path.join(tmp, 'cloud', 'state-images'))).toHaveLength(2);

    const second = await start({ stateFile: stateFile(), transitionDelayMs });
    try {
      // Tokens are not kept; the same users, projects and application credentials are.
      expect((await call(demo, 'GET', `${second.url}/network/v2.0/networks`)).status).toBe(401);
      demo = await login(second);
      admin = await login(second, 'admin');
      u = urls(second, demo);
      expect({ projectId: demo.projectId, userId: demo.userId }).toEqual({ projectId: made.demo.projectId, userId: made.demo.userId });
      const byAppCred = await fetch(`${second.url}/identity/v3/auth/tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          auth: { identity: { methods: ['application_credential'], application_credential: { id: made.appCred.id, secret: 'kept-secret' } } },
        }),
      });
      expect(byAppCred.status).toBe(201);

      // Neutron, seeds not doubled.
      const publics = (await call(demo, 'GET', `${u.network}/networks?name=public`)).body.networks;
      expect(publics.map((n: any) => n.id)).toEqual([made.public.id]);
      const network = (await call(demo, 'GET', `${u.network}/networks/${made.network.id}`)).body.network;
      expect(network).toMatchObject({ name: 'kept', subnets: [made.subnet.id], tags: ['kept-tag'] });
      expect((await call(demo, 'GET', `${u.network}/ports/${made.port.id}`)).body.port).toMatchObject({
        mac_address: made.port.mac_address,
        fixed_ips: made.port.fixed_ips,
      });
      expect((await call(demo, 'GET', `${u.network}/routers/${made.router.id}`)).body.router.external_gateway_info.network_id).toBe(made.public.id);
      expect((await call(demo, 'GET', `${u.network}/security-group-rules/${made.rule.id}`)).body.security_group_rule).toMatchObject({
        port_range_min: 22,
        security_group_id: made.group.id,
      });
      expect((await call(demo, 'GET', `${u.network}/floatingips/${made.floatingIp.id}`)).body.floatingip).toMatchObject({
        floating_ip_address: made.floatingIp.floating_ip_address,
        port_id: made.port.id,
      });
      expect((await call(demo, 'GET', `${u.network}/trunks/${made.trunk.id}`)).body.trunk.port_id).toBe(made.port.id);
      expect((await call(demo, 'GET', `${u.network}/quotas/${demo.projectId}`)).body.quota.port).toBe(321);
      // New objects get addresses, MACs and standard-attribute ids the restored ones do not have.
      const newPort = await created(demo, `${u.network}/ports`, { port: { network_id: made.network.id } }, 'port');
      expect(newPort.mac_address).not.toBe(made.port.mac_address);
      expect(newPort.fixed_ips[0].ip_address).not.toBe(made.port.fixed_ips[0].ip_address);
      await created(
        demo,
        `${u.network}/security-group-rules`,
        { security_group_rule: { security_group_id: made.group.id, direction: 'ingress', protocol: 'tcp', port_range_min: 80, port_range_max: 80 } },
        'security_group_rule',
      );
      const attrIds = (await call(demo, 'GET', `${u.network}/security-groups/${made.group.id}`)).body.security_group.security_group_rules.map(
        (r: any) => r.standard_attr_id,
      );
      expect(new Set(attrIds).size).toBe(attrIds.length);

      // Nova: the server ACTIVE, the one building settles, flavors not doubled, counters go on.
      expect((await call(demo, 'GET', `${u.compute}/servers/${made.server.id}`)).body.server).toMatchObject({ status: 'ACTIVE', name: 'kept' });
      await until(demo, `${u.compute}/servers/${made.building.id}`, 'server', 'ACTIVE');
      const flavors = (await call(admin, 'GET', `${u.compute}/flavors`)).body.flavors.map((f: any) => f.name);
      expect(flavors.filter((name: string) => name === 'm1.tiny')).toHaveLength(1);
      expect(flavors).toContain('kept.flavor');
      expect((await call(demo, 'GET', `${u.compute}/os-keypairs/kept`)).body.keypair.fingerprint).toBe(made.keypair.fingerprint);
      await created(demo, `${u.compute}/os-keypairs`, { keypair: { name: 'new' } }, 'keypair');
      expect((await call(demo, 'GET', `${u.compute}/os-keypairs/new`)).body.keypair.id).toBeGreaterThan(made.keypairId);
      expect((await call(demo, 'GET', `${u.compute}/os-server-groups/${made.serverGroup.id}`)).body.server_group.name).toBe('kept');
      const instanceName = async (id: string) => (await call(admin, 'GET', `${u.compute}/servers/${id}`)).body.server['OS-EXT-SRV-ATTR:instance_name'];
      const another = await created(
        demo,
        `${u.compute}/servers`,
        { server: { name: 'new', flavorRef: '1', imageRef: made.image.id, networks: [{ uuid: made.network.id }] } },
        'server',
      );
      const names = [await instanceName(made.server.id), await instanceName(made.building.id), await instanceName(another.id)];
      expect(new Set(names).size).toBe(3);
      const limits = (await call(demo, 'GET', `${u.compute}/limits`)).body.limits.absolute;
      expect({ instances: limits.maxTotalInstances, cores: limits.maxTotalCores }).toEqual({ instances: 7, cores: -1 });

      // Octavia: the pending pool settles, and its load balancer with it.
      await until(demo, `${u.lbaas}/pools/${made.pool.id}`, 'pool', 'ACTIVE', 'provisioning_status');
      await until(demo, `${u.lbaas}/loadbalancers/${made.lb.id}`, 'loadbalancer', 'ACTIVE', 'provisioning_status');
      const lb = (await call(demo, 'GET', `${u.lbaas}/loadbalancers/${made.lb.id}`)).body.loadbalancer;
      expect(lb).toMatchObject({ vip_port_id: made.lb.vip_port_id, listeners: [{ id: made.listener.id }], pools: [{ id: made.pool.id }] });

      // Glance: the same images, the upload's data back, the seed not doubled.
      const seeds = (await call(demo, 'GET', `${u.image}/images?name=ubuntu-22.04`)).body.images;
      expect(seeds.map((i: any) => [i.id, i.checksum])).toEqual([[made.image.id, made.image.checksum]]);
      const uploaded = await fetch(`${u.image}/images/${made.uploaded.id}/file`, { headers: { 'x-auth-token': demo.token } });
      expect(Buffer.from(await uploaded.arrayBuffer()).equals(made.imageData)).toBe(true);
      expect((await call(demo, 'GET', `${u.image}/images/${made.uploaded.id}`)).body.status).toBe('active');

      // Cinder: the available volume kept, the creating one settles.
      expect(await statusOf(demo, `${u.volume}/volumes/${made.volume.id}`, 'volume')).toBe('available');
      await until(demo, `${u.volume}/volumes/${made.creating.id}`, 'volume', 'available');
      const types = (await call(demo, 'GET', `${u.volume}/types`)).body.volume_types;
      expect(types).toHaveLength(1);

      // The seeded counts, once each.
      expect(second.inventory().network).toMatchObject({ networks: 2, routers: 1, trunks: 1 });
    } finally {
      await second.close();
    }
  });

  it('starts seeded over a saved cloud with freshState', async () => {
    const fresh = await start({ stateFile: stateFile(), freshState: true });
    try {
      expect(fresh.inventory().network).toMatchObject({ networks: 1, routers: 0 });
    } finally {
      await fresh.close();
    }
    expect(await readdir(path.join(tmp, 'cloud', 'state-images'))).toHaveLength(1);
  });

  it('fails the start on a file it cannot read, naming the file, and leaves the file alone', async () => {
    const file = path.join(tmp, 'corrupt.json');
    for (const text of ['{"version": 1, "quotas": [', JSON.stringify({ version: 1, quotas: [], services: { network: { networks: 'no' } } })]) {
      await writeFile(file, text);
      const error = await start({ stateFile: file }).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error?.message).toMatch(new RegExp(`^simulated cloud: cannot restore state from ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: `));
      expect(error?.message).not.toContain('\n');
      expect(await readFile(file, 'utf8')).toBe(text);
    }
  });
});
