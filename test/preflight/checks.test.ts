/**
 * Preflight against the OpenStack simulator over real HTTP: each kind of
 * problem a cloud can have for a cluster, and the message that says what to
 * do about it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createServiceClients, loadCloud, OpenStackSession, type ServiceClients, type ServiceType } from '../../src/openstack/index.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/host.js';
import { createCinderSimulator } from '../../src/simulator/cinder/index.js';
import { createGlanceSimulator } from '../../src/simulator/glance/index.js';
import { createNeutronSimulator } from '../../src/simulator/neutron/index.js';
import { createNovaSimulator } from '../../src/simulator/nova/index.js';
import { formatReport, requirementsOf, runPreflight, summarizeFailures, type PreflightReport, type PreflightRequirements } from '../../src/preflight/index.js';
import { clusterSpec, machineSpec, machineSpecs } from './specs.js';

interface Connection {
  session: OpenStackSession;
  clients: ServiceClients;
}

const sessions: OpenStackSession[] = [];

async function connect(simulator: Simulator, cloudName = 'sim', cloudsYaml = simulator.cloudsYaml('sim')): Promise<Connection> {
  // Retries of unreachable hosts wait for nothing, so a dead endpoint fails at once.
  const session = await OpenStackSession.create(loadCloud({ cloudsYaml, cloudName }), { sleep: async () => undefined });
  sessions.push(session);
  return { session, clients: createServiceClients(session) };
}

async function preflight(connection: Connection, requirements: PreflightRequirements): Promise<PreflightReport> {
  return runPreflight(connection.clients, connection.session, requirements);
}

function check(report: PreflightReport, name: string) {
  const found = report.checks.find((entry) => entry.name === name);
  if (found === undefined) throw new Error(`no check "${name}" in:\n${formatReport(report)}`);
  return found;
}

function failures(report: PreflightReport): string[] {
  return report.checks.filter((entry) => entry.status === 'fail').map((entry) => entry.message);
}

/** A request outside the typed clients, for the admin set-up steps they do not offer. */
async function send<T>(connection: Connection, service: ServiceType, method: 'POST' | 'PUT', path: string, body: unknown, schema: z.ZodType<T>): Promise<T> {
  return (await connection.session.request(service, { method, path, body }, schema)).body;
}

const withId = z.looseObject({ id: z.string() });
const networkBody = z.object({ network: withId });

const defaultShape = () => requirementsOf(clusterSpec(), machineSpecs());

afterAll(() => {
  for (const session of sessions) session.close();
});

interface Cloud {
  simulator: Simulator;
  demo: Connection;
}

/** A simulated cloud of the enclosing suite's own, which its tests may change, and a connection as the demo user. */
function simulatedCloud(options: SimulatorOptions = { transitionDelayMs: 20 }): Cloud {
  const cloud = {} as Cloud;
  beforeAll(async () => {
    cloud.simulator = await startSimulator(options);
    cloud.demo = await connect(cloud.simulator);
  });
  afterAll(async () => {
    await cloud.simulator?.close();
  });
  return cloud;
}

describe('preflight on a cloud that can hold the cluster', () => {
  const cloud = simulatedCloud();

  it('passes every check, each with what it found', async () => {
    const withVolumes = machineSpec({ rootVolume: { sizeGiB: 20 } });
    const report = await preflight(cloud.demo, requirementsOf(clusterSpec(), machineSpecs(6, withVolumes)));
    expect(failures(report)).toEqual([]);
    expect(report.passed).toBe(true);
    expect(report.checks.every((entry) => entry.status === 'pass')).toBe(true);
    expect(check(report, 'authentication').message).toMatch(/^authenticated to project demo \(/);
    expect(check(report, 'image ubuntu-22.04').message).toMatch(/^image 'ubuntu-22\.04' \(.+\) is active$/);
    expect(check(report, 'flavor m1.small').message).toBe("flavor 'm1.small' (id 2): 1 vCPU, 2048 MiB RAM, 20 GB disk, for 7 servers");
    expect(check(report, 'external network').message).toMatch(/^network 'public' \(.+\) found \(the only external network\)$/);
    expect(check(report, 'load balancer service').message).toMatch(/^Octavia answers; providers: /);
    expect(check(report, 'quota cores').message).toBe('cores quota: 400 of 400 free, cluster needs 7');
    expect(check(report, 'quota RAM').message).toBe('RAM quota: 1024000 MiB of 1024000 MiB free, cluster needs 14336 MiB');
    expect(check(report, 'quota volume storage').message).toMatch(/cluster needs 120 GiB$/);
    expect(check(report, 'quota floating IPs').message).toBe('floating IPs quota: 200 of 200 free, cluster needs 2');
    expect(check(report, 'quota load balancers').message).toBe('load balancers quota: unlimited, cluster needs 1');
    // Quotas come after the resources they are about.
    const names = report.checks.map((entry) => entry.name);
    expect(names.findIndex((name) => name.startsWith('quota '))).toBeGreaterThan(names.indexOf('load balancer service'));
    expect(summarizeFailures(report)).toBe(`all ${report.checks.length} preflight checks passed`);
    expect(formatReport(report)).toMatch(/^PASS {2}authentication {2,}authenticated to project demo/);
    expect(formatReport(report)).toContain(`Preflight passed: ${report.checks.length} checks passed.`);
  });

  it('fails for an image that is missing, ambiguous or not active, naming the field to fix', async () => {
    const admin = await connect(cloud.simulator, 'sim-admin');
    await send(admin, 'image', 'POST', '/v2/images', { name: 'twin', visibility: 'public' }, withId);
    await send(admin, 'image', 'POST', '/v2/images', { name: 'twin', visibility: 'public' }, withId);
    const queued = (await send(admin, 'image', 'POST', '/v2/images', { name: 'half-uploaded', visibility: 'public' }, withId)).id;
    const missingId = randomUUID();
    const withImage = (image: unknown) => machineSpec({ image });
    const report = await preflight(
      cloud.demo,
      requirementsOf(clusterSpec({ bastion: { enabled: true, spec: withImage({ filter: { name: 'ubuntu-22.04', tags: ['golden'] } }) } }), [
        withImage({ filter: { name: 'ubuntu-24.04' } }),
        withImage({ filter: { name: 'twin' } }),
        withImage({ filter: { name: 'half-uploaded' } }),
        withImage({ id: missingId }),
      ]),
    );
    expect(report.passed).toBe(false);
    expect(check(report, 'image ubuntu-24.04').message).toBe("image 'ubuntu-24.04' not found in project demo: upload it or fix spec.image.filter.name");
    expect(check(report, 'image twin').message).toMatch(
      /^2 images match name 'twin' \(.+, .+\): add tags to spec\.image\.filter so that only one matches, or use spec\.image\.id$/,
    );
    expect(check(report, 'image half-uploaded').message).toBe(
      `image 'half-uploaded' (${queued}) is queued, not active: wait until its upload finishes, or choose another image`,
    );
    expect(check(report, `image ${missingId}`).message).toBe(
      `image ${missingId} not found in project demo: fix spec.image.id, or share the image with the project`,
    );
    expect(check(report, 'image ubuntu-22.04[golden]').message).toBe(
      "no image with name 'ubuntu-22.04' and tags golden in project demo: upload or tag one, or fix spec.image.filter",
    );
    expect(summarizeFailures(report)).toMatch(
      /^5 preflight checks failed: image 'ubuntu-24\.04' not found in project demo: upload it or fix spec\.image\.filter\.name; /,
    );
  });

  it('fails for a flavor the project cannot boot, listing the ones it can; cores and RAM then cannot be told', async () => {
    const report = await preflight(
      cloud.demo,
      requirementsOf(clusterSpec(), [machineSpec({ flavor: { filter: { name: 'm1.huge' } } }), machineSpec({ flavor: { id: '99' } })]),
    );
    expect(check(report, 'flavor m1.huge')).toEqual({
      name: 'flavor m1.huge',
      status: 'fail',
      message: "flavor 'm1.huge' not found in project demo: fix spec.flavor.filter.name (available: m1.large, m1.medium, m1.small, m1.tiny)",
    });
    expect(check(report, 'flavor 99').message).toBe(
      "flavor id '99' not found in project demo: fix spec.flavor.id (available: m1.large, m1.medium, m1.small, m1.tiny)",
    );
    expect(check(report, 'flavor m1.small').status).toBe('pass');
    expect(check(report, 'quota cores')).toEqual({
      name: 'quota cores',
      status: 'warn',
      message: 'cores quota: cannot tell what the cluster needs until every flavor is found',
    });
    expect(check(report, 'quota instances').status).toBe('pass');
  });

  it('checks nothing else when the credentials are refused, and says which cloud to fix', async () => {
    const wrongPassword = cloud.simulator.cloudsYaml('sim').replace(/password: .*/g, 'password: not-the-password');
    const report = await preflight(await connect(cloud.simulator, 'sim', wrongPassword), defaultShape());
    expect(report.passed).toBe(false);
    expect(report.checks).toHaveLength(1);
    expect(report.checks[0]).toMatchObject({ name: 'authentication', status: 'fail' });
    expect(report.checks[0]!.message).toMatch(
      /^authentication failed: keystone POST \/v3\/auth\/tokens: 401 Unauthorized.*check the credentials of cloud "sim"/,
    );
  });

  it('points at auth_url when Keystone cannot be reached', async () => {
    const closed = await startSimulator();
    const cloudsYaml = closed.cloudsYaml('sim');
    await closed.close();
    const report = await preflight(await connect(closed, 'sim', cloudsYaml), defaultShape());
    expect(report.checks).toEqual([
      { name: 'authentication', status: 'fail', message: expect.stringMatching(/cannot reach .*connection refused.* — check auth\.auth_url in clouds\.yaml$/) },
    ]);
  });
});

describe('preflight quota headroom', () => {
  const cloud = simulatedCloud();

  it('fails each quota that is too small, net of what the project already uses, and passes unlimited ones', async () => {
    await cloud.demo.clients.neutron.createNetwork({ name: 'already-here' });
    cloud.simulator.setQuota('demo', 'cores', 3);
    cloud.simulator.setQuota('demo', 'ram', 8192);
    cloud.simulator.setQuota('demo', 'instances', Infinity);
    cloud.simulator.setQuota('demo', 'network', 1);
    cloud.simulator.setQuota('demo', 'floatingip', 1);
    cloud.simulator.setQuota('demo', 'gigabytes', 50);
    cloud.simulator.setQuota('demo', 'load_balancer', 0);
    const report = await preflight(cloud.demo, requirementsOf(clusterSpec(), machineSpecs(6, machineSpec({ rootVolume: { sizeGiB: 10 } }))));
    expect(report.passed).toBe(false);
    expect(check(report, 'quota cores')).toEqual({
      name: 'quota cores',
      status: 'fail',
      message: 'cores quota: 3 free, cluster needs 7 — raise the quota or use a smaller flavor',
    });
    expect(check(report, 'quota RAM').message).toBe('RAM quota: 8192 MiB free, cluster needs 14336 MiB — raise the quota or use a smaller flavor');
    expect(check(report, 'quota instances')).toEqual({ name: 'quota instances', status: 'pass', message: 'instances quota: unlimited, cluster needs 7' });
    expect(check(report, 'quota networks').message).toBe('networks quota: 0 free, cluster needs 1 — raise the quota or use an existing network (spec.network)');
    expect(check(report, 'quota floating IPs').message).toBe(
      'floating IPs quota: 1 free, cluster needs 2 — raise the quota or release unused floating IPs (or set spec.apiServer.enableFloatingIP: false)',
    );
    expect(check(report, 'quota volume storage').message).toBe(
      'volume storage quota: 50 GiB free, cluster needs 60 GiB — raise the quota or use smaller volumes',
    );
    expect(check(report, 'quota load balancers').message).toBe(
      'load balancers quota: 0 free, cluster needs 1 — raise the quota or delete unused load balancers',
    );
    expect(check(report, 'quota subnets').status).toBe('pass');
  });

  it('warns, without failing, when a quota API cannot be read', async () => {
    cloud.simulator.setQuota('demo', 'cores', 400);
    cloud.simulator.setQuota('demo', 'ram', 1_024_000);
    cloud.simulator.setQuota('demo', 'network', 200);
    cloud.simulator.setQuota('demo', 'floatingip', 200);
    cloud.simulator.setQuota('demo', 'load_balancer', Infinity);
    cloud.simulator.faults.add({ service: 'network', path: '/quotas/', status: 403, message: 'quota reading is not allowed' });
    try {
      const report = await preflight(cloud.demo, requirementsOf(clusterSpec(), machineSpecs()));
      expect(report.passed).toBe(true);
      expect(check(report, 'quota network')).toEqual({
        name: 'quota network',
        status: 'warn',
        message: expect.stringMatching(
          /^Network \(Neutron\) quotas could not be read \(neutron GET .*403 Forbidden.*quota reading is not allowed.*\); check them with `openstack quota show`$/,
        ),
      });
      expect(formatReport(report)).toMatch(/Preflight passed: \d+ checks passed, 1 warning\.\n$/);
    } finally {
      cloud.simulator.faults.clear();
    }
  });
});

describe('preflight external network', () => {
  const cloud = simulatedCloud();
  let admin: Connection;
  let publicId: string;

  beforeAll(async () => {
    admin = await connect(cloud.simulator, 'sim-admin');
    publicId = (await cloud.demo.clients.neutron.findExternalNetworks())[0]!.id;
  });

  const externalCheck = async (cluster: Record<string, unknown>) =>
    check(await preflight(cloud.demo, requirementsOf(clusterSpec(cluster), machineSpecs())), 'external network');

  it('fails when there is none, unless the cluster does without one', async () => {
    await send(admin, 'network', 'PUT', `/v2.0/networks/${publicId}`, { network: { 'router:external': false } }, networkBody);
    try {
      expect(await externalCheck({})).toEqual({
        name: 'external network',
        status: 'fail',
        message:
          'no external network visible to project demo: have the cloud admin share one, or set spec.enableExternalNetwork: false and spec.apiServer.enableFloatingIP: false',
      });
      const without = await preflight(
        cloud.demo,
        requirementsOf(clusterSpec({ enableExternalNetwork: false, apiServer: { enableFloatingIP: false }, bastion: { enabled: false } }), machineSpecs()),
      );
      expect(check(without, 'external network')).toEqual({
        name: 'external network',
        status: 'pass',
        message: 'not used: spec.enableExternalNetwork is false',
      });
      expect(without.checks.map((entry) => entry.name)).not.toContain('quota floating IPs');
      expect(check(without, 'load balancer service')).toMatchObject({
        status: 'pass',
        message: 'not needed: the cluster has no managed API server load balancer',
      });
      expect(await externalCheck({ externalNetwork: { id: publicId } })).toMatchObject({
        status: 'fail',
        message: `network 'public' (${publicId}) is not external (router:external is false): set spec.externalNetwork to an external network`,
      });
    } finally {
      await send(admin, 'network', 'PUT', `/v2.0/networks/${publicId}`, { network: { 'router:external': true } }, networkBody);
    }
  });

  it('fails with several until spec.externalNetwork picks one by id or filter', async () => {
    const second = (await send(admin, 'network', 'POST', '/v2.0/networks', { network: { name: 'ext2', 'router:external': true, shared: true } }, networkBody))
      .network.id;
    expect(await externalCheck({})).toEqual({
      name: 'external network',
      status: 'fail',
      message: '2 external networks (public, ext2): set spec.externalNetwork',
    });
    // The report hands the reconciler the network it found, and none when the check could not pick one.
    expect((await preflight(cloud.demo, requirementsOf(clusterSpec({}), machineSpecs()))).externalNetwork).toBeUndefined();
    const byFilter = await preflight(cloud.demo, requirementsOf(clusterSpec({ externalNetwork: { filter: { name: 'ext2' } } }), machineSpecs()));
    expect(byFilter.externalNetwork).toEqual({ id: second, name: 'ext2' });
    expect(await externalCheck({ externalNetwork: { id: second } })).toEqual({
      name: 'external network',
      status: 'pass',
      message: `network 'ext2' (${second}) is external`,
    });
    expect(await externalCheck({ externalNetwork: { filter: { name: 'ext2' } } })).toEqual({
      name: 'external network',
      status: 'pass',
      message: `network 'ext2' (${second}) matches spec.externalNetwork.filter`,
    });
    expect(await externalCheck({ externalNetwork: { filter: { name: 'ext3' } } })).toMatchObject({
      status: 'fail',
      message: 'no external network matches spec.externalNetwork.filter (name ext3) in project demo: fix the filter',
    });
    await send(admin, 'network', 'PUT', `/v2.0/networks/${second}`, { network: { description: 'spare' } }, networkBody);
    expect(await externalCheck({ externalNetwork: { filter: { description: 'spare' } } })).toMatchObject({ status: 'pass' });
    const missing = randomUUID();
    expect(await externalCheck({ externalNetwork: { id: missing } })).toMatchObject({
      status: 'fail',
      message: `external network ${missing} not found in project demo: fix spec.externalNetwork.id`,
    });
  });
});

describe('preflight without Octavia', () => {
  const cloud = simulatedCloud({ services: [createNeutronSimulator, createNovaSimulator, createGlanceSimulator, createCinderSimulator] });

  it('fails a cluster with a load balancer, and passes one without', async () => {
    const report = await preflight(cloud.demo, defaultShape());
    expect(failures(report)).toEqual([
      expect.stringMatching(
        /^no Octavia for project demo: the catalog has no load-balancer endpoint with interface public in region RegionOne.* — use a cloud with Octavia, or remove spec\.apiServer\.managedLoadBalancer$/,
      ),
    ]);
    expect(report.checks.map((entry) => entry.name)).not.toContain('quota load balancers');
    const without = await preflight(cloud.demo, requirementsOf(clusterSpec({ apiServer: {} }), machineSpecs()));
    expect(without.passed).toBe(true);
  });
});
