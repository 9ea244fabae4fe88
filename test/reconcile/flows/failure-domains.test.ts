/**
 * Failure domains through kubectl, in a simulated cloud with three
 * availability zones: the cluster reports Nova's zones as failure domains and
 * Nova's and Cinder's in its extensions; the three control plane machines of
 * the example, whose Machines leave the zone open, land one per zone and, in
 * an anti-affinity server group, on three hosts; a worker whose Machine names
 * a failure domain is placed there.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { CloudCensus, noResources } from '../../../harness/census.js';
import { apply, deleteWithoutWaiting, getObject, waitForDeletion, waitForReady } from '../../../harness/cluster-flow.js';
import type { TestServer } from '../../../harness/test-server.js';
import { startExampleServer, type ExampleServer } from './examples.js';

const zones = ['az-1', 'az-2', 'az-3'];
const controlPlane = ['demo-control-plane-0', 'demo-control-plane-1', 'demo-control-plane-2'];
const zonedWorker = 'demo-md-0-1';

let example: ExampleServer;
let server: TestServer;
let census: CloudCensus;

const clusterView = z.looseObject({
  status: z.looseObject({
    failureDomains: z.array(z.looseObject({ name: z.string(), controlPlane: z.boolean().optional() })),
    extensions: z.looseObject({ availabilityZones: z.looseObject({ compute: z.array(z.string()), volume: z.array(z.string()).optional() }) }),
  }),
});
const serverView = z.looseObject({ spec: z.looseObject({ availabilityZone: z.string().optional() }), status: z.looseObject({ instanceID: z.string() }) });

/** examples/03-machines.yaml with the control plane in server group `control-plane` and one worker's Machine in az-3. */
async function machinesWithPlacement(): Promise<string> {
  const documents = parseAllDocuments(await readFile(path.join(example.manifests, '03-machines.yaml'), 'utf8')).map(
    (document) => document.toJS() as Record<string, any>,
  );
  for (const document of documents) {
    if (document.kind === 'OpenStackMachine' && controlPlane.includes(document.metadata.name))
      document.spec.serverGroup = { filter: { name: 'control-plane' } };
    if (document.kind === 'Machine' && document.metadata.name === zonedWorker) document.spec.failureDomain = 'az-3';
  }
  return documents.map((document) => JSON.stringify(document)).join('\n---\n');
}

beforeAll(async () => {
  example = await startExampleServer({}, { availabilityZones: zones });
  server = example.server;
  census = await CloudCensus.open(server.cloud!);
  await census.clients.nova.createServerGroup({ name: 'control-plane', policy: 'anti-affinity' });
  for (const file of ['00-cloud-credentials.yaml', '00-images.yaml', '01-cluster.yaml', '02-openstackcluster.yaml', '04-bootstrap-data.yaml'])
    await apply(server.kubectl, path.join(example.manifests, file));
  const machines = await server.kubectl(['apply', '-f', '-'], { input: await machinesWithPlacement() });
  if (machines.code !== 0) throw new Error(`kubectl apply of the machines failed: ${machines.stderr}`);
  await waitForReady(server.kubectl, 'demo', 180);
}, 240_000);

afterAll(async () => {
  census?.close();
  await example?.stop();
});

describe('failure domains in a cloud with three availability zones', () => {
  it("reports the zones as failure domains, and Nova's and Cinder's zones in the extensions", async () => {
    const cluster = clusterView.parse(await getObject(server.kubectl, 'openstackcluster/demo'));
    expect(cluster.status.failureDomains).toEqual(zones.map((name) => ({ name, controlPlane: true })));
    expect(cluster.status.extensions.availabilityZones).toEqual({ compute: zones, volume: zones });
    const extension = z.looseObject({ status: z.looseObject({ extensions: z.looseObject({ availabilityZones: z.unknown() }) }) });
    expect(extension.parse(await getObject(server.kubectl, 'clusterextension/demo')).status.extensions.availabilityZones).toEqual({
      compute: zones,
      volume: zones,
    });
  });

  it('spreads the control plane one machine per zone, on three hosts of its anti-affinity group', async () => {
    const placed = await Promise.all(
      controlPlane.map(async (name) => {
        const object = serverView.parse(await getObject(server.kubectl, `openstackserver/${name}`));
        const nova = await census.clients.nova.getServer(object.status.instanceID);
        return { asked: object.spec.availabilityZone, zone: nova['OS-EXT-AZ:availability_zone'] };
      }),
    );
    expect(placed.map((entry) => entry.asked).sort()).toEqual(zones);
    expect(placed.map((entry) => entry.zone).sort()).toEqual(zones);
    const [group] = (await census.clients.nova.listServerGroups()).filter((candidate) => candidate.name === 'control-plane');
    expect(group.members).toHaveLength(3);
  });

  it('places a worker in the failure domain its Machine names, and leaves the others to Nova', async () => {
    const zoned = serverView.parse(await getObject(server.kubectl, `openstackserver/${zonedWorker}`));
    expect(zoned.spec.availabilityZone).toBe('az-3');
    expect((await census.clients.nova.getServer(zoned.status.instanceID))['OS-EXT-AZ:availability_zone']).toBe('az-3');
    const free = serverView.parse(await getObject(server.kubectl, 'openstackserver/demo-md-0-0'));
    expect(free.spec.availabilityZone).toBeUndefined();
  });

  it('deletes everything, leaving nothing in the cloud', async () => {
    await deleteWithoutWaiting(server.kubectl, example.manifests);
    await waitForDeletion(server.kubectl, 180);
    expect((await census.ours()).counts).toEqual(noResources);
  }, 240_000);
});
