/**
 * A server being built is looked at while its ports are read again, not after: the server's step
 * waits for its ports' step, but its read does not. And a new server's references (its image, its
 * flavor, its ports' networks) are resolved at once, not one after another. Its first pass looks
 * nothing up by name; a later one that must looks for the server with its ports' lookups.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultServices, type ServedRequest } from '../../../src/simulator/host.js';
import type { SimulatorContext } from '../../../src/simulator/framework.js';
import { createNovaSimulator } from '../../../src/simulator/nova/index.js';
import type { JsonObject } from '../../../src/storage/interface.js';
import { firstRead, overlapping, provisionExampleCluster, startSteps, type Steps } from '../steps.js';

/** Long enough for several passes, with what they verified running out, to find the server still building. */
const serverBuildMs = 4_000;
const slowNova = (ctx: SimulatorContext) => createNovaSimulator(Object.create(ctx, { transitionDelayMs: { value: serverBuildMs } }) as SimulatorContext);

let steps: Steps;
const served: ServedRequest[] = [];

beforeAll(async () => {
  steps = await startSteps(
    { services: defaultServices.map((factory) => (factory === createNovaSimulator ? slowNova : factory)), onRequest: (request) => served.push(request) },
    { resyncPeriodMs: 1_000 },
  );
  await provisionExampleCluster(steps);
}, 90_000);

afterAll(async () => {
  await steps?.stop();
});

/** An OpenStackServer of the example cluster with one port on the cluster network. */
async function applyServer(name: string, flavor: string): Promise<void> {
  const networkId = (((await steps.get('cluster', 'demo'))?.status ?? {}) as { network?: { id: string } }).network?.id;
  expect(networkId).toEqual(expect.any(String));
  await steps.applyObjects([
    {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
      kind: 'OpenStackServer',
      metadata: { name, namespace: 'default', labels: { 'cluster.x-k8s.io/cluster-name': 'demo' } },
      spec: {
        flavor,
        image: { filter: { name: 'ubuntu-22.04' } },
        sshKeyName: '',
        identityRef: { name: 'demo-cloud-config', cloudName: 'openstack' },
        ports: [{ network: { id: networkId } }],
      },
    },
  ]);
}

describe('a new OpenStackServer', () => {
  // First in the file: the image and flavor lookups are remembered per cloud for minutes.
  it('resolves its image, flavor and network at once', async () => {
    // Lookups slow enough that one after the other could not overlap.
    steps.cloud.faults.add({ service: 'image', method: 'GET', path: '^/v2/images', latencyMs: 200 });
    steps.cloud.faults.add({ service: 'compute', method: 'GET', path: '^/v2.1/flavors', latencyMs: 200 });
    steps.cloud.faults.add({ service: 'network', method: 'GET', path: '^/v2.0/networks/', latencyMs: 200 });
    const from = served.length;
    await applyServer('api', 'm1.medium');
    await steps.until([['server', 'api']], (object) => ((object?.status as JsonObject | undefined)?.resolved as JsonObject | undefined)?.imageID !== undefined);

    const reads = served.slice(from);
    const lookups = [
      firstRead(reads, 'image', /^\/v2\/images/),
      firstRead(reads, 'compute', /^\/v2\.1\/flavors/),
      firstRead(reads, 'network', /^\/v2\.0\/networks\//),
    ];
    expect(lookups.every(Boolean)).toBe(true);
    // Every pair of lookups was in the cloud at the same moment.
    for (const a of lookups) for (const b of lookups) expect(overlapping(a!, b!)).toBe(true);
  });
});

describe('an OpenStackServer being built', () => {
  it('is read at the same time as its ports', async () => {
    await applyServer('web', 'm1.small');
    await steps.until([['server', 'web']], (object) => (object?.status as JsonObject | undefined)?.instanceID !== undefined);
    // Reads slow enough that one after the other could not overlap.
    steps.cloud.faults.add({ service: 'network', method: 'GET', path: '^/v2.0/ports', latencyMs: 200 });
    steps.cloud.faults.add({ service: 'compute', method: 'GET', path: '^/v2.1/servers/', latencyMs: 200 });
    const from = served.length;
    await steps.until([['server', 'web']], (object) => (object?.status as JsonObject | undefined)?.ready === true, 30_000);

    const reads = served.slice(from);
    const portReads = reads.filter((request) => request.service === 'network' && request.method === 'GET' && request.path.startsWith('/v2.0/ports'));
    const serverReads = reads.filter((request) => request.service === 'compute' && request.method === 'GET' && /^\/v2\.1\/servers\/[^/?]+$/.test(request.path));
    expect(portReads.length).toBeGreaterThan(0);
    const readBesidePorts = serverReads.filter((server) => portReads.some((port) => overlapping(server, port)));
    expect(readBesidePorts.length).toBeGreaterThan(0);
  });
});

describe("an OpenStackServer's lookups by name", () => {
  it('are not made by its first pass: nothing can have been made for it before', async () => {
    const from = served.length;
    await applyServer('cache', 'm1.small');
    await steps.until([['server', 'cache']], (object) => (object?.status as JsonObject | undefined)?.instanceID !== undefined);

    const reads = served.slice(from);
    expect(firstRead(reads, 'network', /^\/v2\.0\/ports\?name=/)).toBeUndefined();
    expect(firstRead(reads, 'compute', /^\/v2\.1\/servers\/detail\?.*name=/)).toBeUndefined();
  });

  it('after a pass that may have made something, look for the server while its ports are looked for, not after the ports are made', async () => {
    // The first pass writes what it resolved, then its port's create is refused: the next pass cannot know what the first made.
    steps.cloud.faults.add({ service: 'network', method: 'POST', path: '^/v2.0/ports$', status: 409, message: 'injected conflict', times: 1 });
    // Lookups slow enough that one after the other could not overlap.
    steps.cloud.faults.add({ service: 'network', method: 'GET', path: '^/v2.0/ports$', latencyMs: 200 });
    steps.cloud.faults.add({ service: 'compute', method: 'GET', path: '^/v2.1/servers/detail$', latencyMs: 200 });
    const from = served.length;
    await applyServer('db', 'm1.small');
    await steps.until([['server', 'db']], (object) => (object?.status as JsonObject | undefined)?.instanceID !== undefined);

    const reads = served.slice(from);
    const portLookup = firstRead(reads, 'network', /^\/v2\.0\/ports\?name=db-0$/);
    const serverLookup = firstRead(reads, 'compute', /^\/v2\.1\/servers\/detail\?.*name=/);
    expect(portLookup && serverLookup).toBeDefined();
    expect(overlapping(portLookup!, serverLookup!)).toBe(true);
  });
});
