/**
 * Autoscaling from zero, through kubectl on the embedded default: an
 * OpenStackMachineTemplate of a Cluster reports the capacity of one of its
 * machines (from the flavor, the root volume and the image's os_type) in its
 * status, as CAPO does; a template with no Cluster is left alone until it has
 * one; a flavor that does not exist is a clear condition.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadCloud, OpenStackSession } from '../../../src/openstack/index.js';
import { apply, getObject, waitForObject } from '../../../harness/cluster-flow.js';
import type { TestServer } from '../../../harness/test-server.js';
import { startExampleServer, type ExampleServer } from '../flows/examples.js';

const condition = z.looseObject({ type: z.string(), status: z.string(), reason: z.string(), message: z.string().optional() });
const templateView = z.looseObject({
  status: z
    .looseObject({
      capacity: z.record(z.string(), z.string()).optional(),
      nodeInfo: z.looseObject({ operatingSystem: z.string().optional() }).optional(),
      conditions: z.array(condition).optional(),
    })
    .default({}),
});
type TemplateView = z.infer<typeof templateView>;

let example: ExampleServer;
let server: TestServer;
let admin: OpenStackSession;

beforeAll(async () => {
  example = await startExampleServer();
  server = example.server;
  for (const file of ['00-cloud-credentials.yaml', '01-cluster.yaml', '02-openstackcluster.yaml'])
    await apply(server.kubectl, path.join(example.manifests, file));
  admin = await OpenStackSession.create(loadCloud({ cloudsYaml: server.cloud!.cloudsYaml('sim'), cloudName: 'sim-admin' }));
  // What an operator offers: a flavor with an ephemeral disk, and an image that says its operating system.
  await admin.request(
    'compute',
    { method: 'POST', path: '/flavors', body: { flavor: { name: 'm1.scratch', vcpus: 3, ram: 3072, disk: 25, 'OS-FLV-EXT-DATA:ephemeral': 10 } } },
    z.unknown(),
  );
  await admin.request(
    'image',
    {
      method: 'POST',
      path: '/v2/images',
      body: { name: 'linux-node', os_type: 'linux', visibility: 'public', disk_format: 'qcow2', container_format: 'bare' },
    },
    z.unknown(),
  );
}, 120_000);

afterAll(async () => {
  admin?.close();
  await example?.stop();
});

function template(name: string, options: { labels?: Record<string, string>; machine: Record<string, unknown> }): string {
  return JSON.stringify({
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2',
    kind: 'OpenStackMachineTemplate',
    metadata: { name, namespace: 'default', ...(options.labels ? { labels: options.labels } : {}) },
    spec: { template: { spec: options.machine } },
  });
}

async function applyJson(document: string): Promise<void> {
  const result = await server.kubectl(['apply', '-f', '-'], { input: document });
  if (result.code !== 0) throw new Error(`kubectl apply failed: ${result.stderr}`);
}

async function readTemplate(name: string): Promise<TemplateView> {
  return templateView.parse(await getObject(server.kubectl, `openstackmachinetemplate/${name}`));
}

const readyCondition = (view: TemplateView) => view.status.conditions?.find((candidate) => candidate.type === 'Ready');

async function untilReported(name: string): Promise<TemplateView> {
  return waitForObject(
    server.kubectl,
    `openstackmachinetemplate/${name}`,
    'a Ready condition',
    (object) => readyCondition(templateView.parse(object)) !== undefined,
    60,
  ).then((object) => templateView.parse(object));
}

const ofDemo = { 'cluster.x-k8s.io/cluster-name': 'demo' };

describe('OpenStackMachineTemplate status for autoscaling from zero', () => {
  it('reports cpu, memory, ephemeral-storage and storage from the flavor, and the operating system from the image', async () => {
    await applyJson(
      template('demo-md-scratch', { labels: ofDemo, machine: { flavor: { filter: { name: 'm1.scratch' } }, image: { filter: { name: 'linux-node' } } } }),
    );
    const reported = await untilReported('demo-md-scratch');
    expect(readyCondition(reported)).toMatchObject({ status: 'True', reason: 'Ready' });
    expect(reported.status.capacity).toEqual({ cpu: '3', memory: '3Gi', 'ephemeral-storage': '10Gi', storage: '25Gi' });
    expect(reported.status.nodeInfo).toEqual({ operatingSystem: 'linux' });
    expect(reported.status.conditions?.find((candidate) => candidate.type === 'OpenStackAuthenticationSucceeded')).toMatchObject({ status: 'True' });
  });

  it('takes storage from the root volume, and reports no operating system for an image without os_type', async () => {
    await applyJson(
      template('demo-md-volume', {
        labels: ofDemo,
        machine: { flavor: { id: '1' }, image: { filter: { name: 'ubuntu-22.04' } }, rootVolume: { sizeGiB: 30 } },
      }),
    );
    const reported = await untilReported('demo-md-volume');
    expect(reported.status.capacity).toEqual({ cpu: '1', memory: '512Mi', storage: '30Gi' });
    expect(reported.status.nodeInfo).toBeUndefined();
    const printed = await server.kubectl(['get', 'openstackmachinetemplate', 'demo-md-volume', '-o', 'jsonpath={.status.capacity.memory}']);
    expect(printed.stdout).toBe('512Mi');
  });

  it('says so when the flavor does not exist', async () => {
    await applyJson(
      template('demo-md-missing', { labels: ofDemo, machine: { flavor: { filter: { name: 'm9.huge' } }, image: { filter: { name: 'ubuntu-22.04' } } } }),
    );
    const reported = await untilReported('demo-md-missing');
    expect(readyCondition(reported)).toMatchObject({ status: 'False', reason: 'OpenStackError' });
    expect(readyCondition(reported)?.message).toContain('flavor "m9.huge" does not exist');
    expect(reported.status.capacity).toBeUndefined();
  });

  it('leaves a template without a Cluster alone, and reports once its Cluster exists', async () => {
    const identityRef = { name: 'demo-cloud-config', cloudName: 'openstack' };
    await applyJson(
      template('later-md-0', {
        labels: { 'cluster.x-k8s.io/cluster-name': 'later' },
        machine: { flavor: { filter: { name: 'm1.small' } }, image: { filter: { name: 'ubuntu-22.04' } }, identityRef },
      }),
    );
    // The reconciler has seen the template (and left it) once a template applied after it is reported.
    await applyJson(template('demo-md-marker', { labels: ofDemo, machine: { flavor: { id: '2' }, image: { filter: { name: 'ubuntu-22.04' } } } }));
    await untilReported('demo-md-marker');
    expect((await readTemplate('later-md-0')).status).toEqual({});

    await applyJson(
      JSON.stringify({
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Cluster',
        metadata: { name: 'later', namespace: 'default' },
        spec: { clusterNetwork: { pods: { cidrBlocks: ['192.168.0.0/16'] } } },
      }),
    );
    const reported = await untilReported('later-md-0');
    expect(reported.status.capacity).toEqual({ cpu: '1', memory: '2Gi', storage: '20Gi' });
  });
});
