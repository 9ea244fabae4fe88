/**
 * Pool members go in batches: a machine that has the load balancer's turn sends the members other
 * machines want in that pool with its own, in one batch update (one change of the load balancer),
 * and they find theirs by name and owner tag, in lists of the pool they share. A machine deleted before it recorded the member a
 * batch made for it still leaves nothing behind. Machines of a cluster being torn down leave their
 * members to the load balancers' cascade delete.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceClients, loadCloud, OpenStackSession, type Member, type ServiceClients } from '../../../src/openstack/index.js';
import type { JsonObject } from '../../../src/storage/interface.js';
import { condition, isReady, startMachineSteps, type StepKind, type Steps } from '../steps.js';

const status = (object: JsonObject | undefined) => (object?.status ?? {}) as Record<string, any>;
const owned = (object: JsonObject | undefined): Record<string, string> => status(object).extensions?.ownedResources ?? {};
const memberChanges = (steps: Steps) => steps.requests.filter((line) => /^load-balancer (POST|PUT) \/v2\/lbaas\/pools\/[^/]+\/members\S* 20\d/.test(line));
const batches = (steps: Steps) => steps.requests.filter((line) => /^load-balancer PUT \/v2\/lbaas\/pools\/[^/]+\/members\?additive_only=true 202/.test(line));

async function ingressPools(steps: Steps): Promise<[string, string][]> {
  const cluster = await steps.get('cluster', 'demo');
  return Object.entries(owned(cluster))
    .filter(([role]) => role.startsWith('ingress/pool/'))
    .map(([role, id]) => [role.slice('ingress/pool/'.length), id]);
}

const namedFor = (machine: string) => (member: Member) => (member.name ?? '').endsWith(machine);

/** The example's cluster made Ready with these machines applied (not yet reconciled), and a client of its cloud, for one describe block. */
function clusterWith(machines: readonly string[]): { steps: Steps; cloud: ServiceClients } {
  const context = {} as { steps: Steps; cloud: ServiceClients; session?: OpenStackSession };
  beforeAll(async () => {
    context.steps = await startMachineSteps(machines);
    context.session = await OpenStackSession.create(loadCloud({ cloudsYaml: context.steps.cloud.cloudsYaml('sim'), cloudName: 'sim' }));
    context.cloud = createServiceClients(context.session);
    await context.steps.until([['cluster', 'demo']], isReady, 60_000);
  }, 90_000);
  afterAll(async () => {
    context.session?.close();
    await context.steps?.stop();
  });
  return context;
}

/** Runs every machine's and server's passes until each machine is Ready. */
async function joinAll(steps: Steps, machines: readonly string[]): Promise<void> {
  const passes = machines.flatMap((name): [StepKind, string][] => [
    ['machine', name],
    ['server', name],
  ]);
  for (const name of machines) await steps.until([['machine', name], ...passes], isReady, 60_000);
}

describe('three workers joining the ingress load balancer together', () => {
  const workers = ['demo-md-0-0', 'demo-md-0-1', 'demo-md-0-2'];
  const context = clusterWith(workers);

  it('send their members in fewer changes than one per member, and each records its own', async () => {
    const { steps, cloud } = context;
    await joinAll(steps, workers);

    const pools = await ingressPools(steps);
    expect(pools).toHaveLength(2);
    // Six members, against six changes one at a time.
    expect(batches(steps).length).toBeGreaterThan(0);
    expect(memberChanges(steps).length).toBeLessThan(6);
    // Their lookups by name (before a create, after a batch) share lists of the pool: fewer than one a member, none filtered.
    const lookups = steps.requests.filter((line) => /^load-balancer GET \/v2\/lbaas\/pools\/[^/]+\/members(\?| )/.test(line));
    expect(lookups.filter((line) => line.includes('?'))).toEqual([]);
    expect(lookups.length).toBeGreaterThan(0);
    expect(lookups.length).toBeLessThan(6);
    for (const [port, poolId] of pools) {
      const members = await cloud.octavia.listMembers(poolId);
      expect(members).toHaveLength(3);
      for (const name of workers) {
        const machine = await steps.get('machine', name);
        const address = (status(machine).addresses as { type: string; address: string }[]).find((entry) => entry.type === 'InternalIP')!.address;
        const member = members.find(namedFor(name));
        expect(member, `${name}'s member of pool ${port}`).toMatchObject({ address, protocol_port: Number(port), provisioning_status: 'ACTIVE' });
        expect(owned(machine)[`ingress/member/${port}`]).toBe(member!.id);
      }
    }
  });
});

describe('workers on a cloud whose provider has no batch member update', () => {
  const workers = ['demo-md-0-0', 'demo-md-0-1', 'demo-md-0-2'];
  const context = clusterWith(workers);

  it('join one member at a time, each with a plain create, after one refusal', async () => {
    const { steps, cloud } = context;
    // Octavia's answer when the provider does not implement member_batch_update; nothing changes.
    steps.cloud.faults.add({ service: 'load-balancer', method: 'PUT', path: '^/v2/lbaas/pools/[^/]+/members$', status: 501 });
    await joinAll(steps, workers);
    expect(steps.requests.filter((line) => /^load-balancer PUT \/v2\/lbaas\/pools\/[^/]+\/members\S* 501/.test(line))).toHaveLength(1);
    expect(batches(steps)).toEqual([]);
    for (const [, poolId] of await ingressPools(steps)) expect(await cloud.octavia.listMembers(poolId)).toHaveLength(3);
  });
});

describe('a worker deleted before it recorded the member another machine sent for it', () => {
  const [first, second] = ['demo-md-0-0', 'demo-md-0-1'];
  const context = clusterWith([first, second]);

  it('leaves no member behind', async () => {
    const { steps, cloud } = context;
    // The second machine's server gets its address first, without the machine seeing it yet.
    // A few passes: its finalizer, then its OpenStackServer.
    for (let pass = 0; pass < 5 && (await steps.get('server', second)) === undefined; pass++) await steps.pass('machine', second);
    expect(await steps.get('server', second)).toBeDefined();
    await steps.until([['server', second]], (object) => status(object).addresses !== undefined, 30_000);
    // The first joins its first pool alone and holds the load balancer's turn.
    await steps.until(
      [
        ['machine', first],
        ['server', first],
      ],
      (object) => owned(object)['ingress/member/80'] !== undefined,
      30_000,
    );
    // The second sees its address, wants a member in both pools, and waits for the turn.
    await steps.pass('machine', second);
    const waiting = await steps.get('machine', second);
    expect(condition(waiting, 'APIServerIngressReady')?.message).toMatch(/another machine's member change/);
    // The first's next change is its second pool, and it takes the second machine's member along.
    await steps.until([['machine', first]], (object) => owned(object)['ingress/member/443'] !== undefined, 30_000);
    const [, pool443] = (await ingressPools(steps)).find(([port]) => port === '443')!;
    expect(batches(steps).filter((line) => line.includes(pool443))).toHaveLength(1);
    expect((await cloud.octavia.listMembers(pool443)).filter(namedFor(second))).toHaveLength(1);
    expect(owned(await steps.get('machine', second))['ingress/member/443']).toBeUndefined();

    await steps.kubectl(['delete', 'openstackmachine', second, '--wait=false']);
    await steps.until(
      [
        ['machine', second],
        ['server', second],
      ],
      (object) => object === undefined,
      30_000,
    );
    for (const [, poolId] of await ingressPools(steps)) {
      expect((await cloud.octavia.listMembers(poolId)).filter(namedFor(second))).toEqual([]);
    }
  });
});

describe('workers of a cluster Cluster API is tearing down', () => {
  const workers = ['demo-md-0-0', 'demo-md-0-1', 'demo-md-0-2'];
  const context = clusterWith(workers);

  it('go without removing their members one by one; the load balancer takes them with it', async () => {
    const { steps, cloud } = context;
    await joinAll(steps, workers);
    const pools = await ingressPools(steps);
    // Cluster API deletes the Cluster first and holds it (its finalizer) until the machines are gone.
    await steps.kubectl([
      'patch',
      'clusters.cluster.x-k8s.io',
      'demo',
      '--type=merge',
      '-p',
      JSON.stringify({ metadata: { finalizers: ['test.capo.dev/hold'] } }),
    ]);
    await steps.kubectl(['delete', 'clusters.cluster.x-k8s.io', 'demo', '--wait=false']);
    const before = steps.requests.length;
    for (const name of workers) await steps.kubectl(['delete', 'openstackmachine', name, '--wait=false']);
    for (const name of workers) {
      await steps.until(
        [
          ['machine', name],
          ['server', name],
        ],
        (object) => object === undefined,
        30_000,
      );
    }
    expect(steps.requests.slice(before).filter((line) => /^load-balancer (DELETE|PUT) \/v2\/lbaas\/pools\//.test(line))).toEqual([]);
    for (const [, poolId] of pools) expect(await cloud.octavia.listMembers(poolId)).toHaveLength(3);

    await steps.kubectl(['delete', 'openstackcluster', 'demo', '--wait=false']);
    await steps.until([['cluster', 'demo']], (object) => object === undefined, 60_000);
    expect(await cloud.octavia.listLoadBalancers()).toEqual([]);
  });
});
