/**
 * `--orc-images=external` behind a real kube-apiserver where ORC's own CRDs are installed: this
 * server does not serve Images then (no APIService for openstack.k-orc.cloud), and an
 * OpenStackServer's `image.imageRef` resolves through ORC's Image objects in the management
 * cluster. The Image waits until its status says Available, as ORC would write it, and the server
 * goes on with the ID it reports.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aggregatedKindsBesideOrc } from '../../src/served-kinds.js';
import { startAggregatedServer, type AggregatedServer } from '../../harness/aggregated-server.js';
import { CloudCensus } from '../../harness/census.js';
import { orcUnavailable, startControlPlane, type ControlPlane } from '../../harness/control-plane.js';
import { renderExamples } from '../reconcile/flows/examples.js';

const unavailable = orcUnavailable();
const group = 'infrastructure.cluster.x-k8s.io';

let plane: ControlPlane;
let server: AggregatedServer;
let census: CloudCensus;
let networkId: string;

async function kubectl(args: string[], input?: string): Promise<string> {
  const result = await plane.kubectl(args, input);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

describe.skipIf(unavailable !== undefined)(
  unavailable === undefined ? 'ORC Images read from the management cluster' : `ORC Images read from the management cluster (skipped: ${unavailable})`,
  () => {
    beforeAll(async () => {
      plane = await startControlPlane({ crds: ['capi', 'orc'] });
      server = await startAggregatedServer(plane, {
        simulatedCloud: { port: 0, transitionDelayMs: 50 },
        reconciler: { resyncPeriodMs: 60_000 },
        kinds: aggregatedKindsBesideOrc,
      });
      census = await CloudCensus.open(server.app.cloud!);
      const network = await census.clients.neutron.createNetwork({ name: 'orc-external' });
      await census.clients.neutron.createSubnet({ network_id: network.id, cidr: '10.77.0.0/24', ip_version: 4 });
      networkId = network.id;
      const manifests = await renderExamples(server.app.cloud!.url);
      await kubectl(['apply', '-f', path.join(manifests, '00-cloud-credentials.yaml')]);
    }, 300_000);

    afterAll(async () => {
      census?.close();
      await server?.close();
      await plane?.stop();
    }, 120_000);

    it("leaves the group to ORC's CRD: kube-apiserver serves Images itself, not through this server", async () => {
      expect(await kubectl(['get', 'apiservice', `v1beta2.${group}`, '-o', 'jsonpath={.spec.service.name}'])).toBe('capo-apiserver');
      // The APIService kube-apiserver makes for a CRD's group is local: no service behind it.
      expect(await kubectl(['get', 'apiservice', 'v1alpha1.openstack.k-orc.cloud', '-o', 'jsonpath={.spec.service}'])).toBe('');
      expect(await kubectl(['get', 'crd', 'images.openstack.k-orc.cloud', '-o', 'name'])).toContain('images.openstack.k-orc.cloud');
    });

    it("resolves image.imageRef through ORC's Image once its status says Available", async () => {
      await kubectl(
        ['apply', '-f', '-'],
        JSON.stringify({
          apiVersion: 'openstack.k-orc.cloud/v1alpha1',
          kind: 'Image',
          metadata: { name: 'ubuntu', namespace: 'default' },
          spec: {
            cloudCredentialsRef: { secretName: 'demo-cloud-config', cloudName: 'openstack' },
            managementPolicy: 'unmanaged',
            import: { filter: { name: 'ubuntu-22.04' } },
          },
        }),
      );
      await kubectl(
        ['apply', '-f', '-'],
        JSON.stringify({
          apiVersion: `${group}/v1alpha1`,
          kind: 'OpenStackServer',
          metadata: { name: 'by-orc-image', namespace: 'default' },
          spec: {
            flavor: 'm1.tiny',
            image: { imageRef: { name: 'ubuntu' } },
            sshKeyName: '',
            identityRef: { name: 'demo-cloud-config', cloudName: 'openstack' },
            ports: [{ network: { id: networkId } }],
          },
        }),
      );
      // No ORC controller runs here: the Image has no status, so the server waits for it.
      await kubectl([
        'wait',
        `openstackservers.${group}/by-orc-image`,
        '--for=jsonpath={.status.conditions[?(@.type=="InstanceReady")].reason}=DependencyNotReady',
        '--timeout=60s',
      ]);

      const [seeded] = await census.clients.glance.findImages({ name: 'ubuntu-22.04' });
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      const condition = (type: string) => ({
        type,
        status: type === 'Available' ? 'True' : 'False',
        reason: 'Success',
        message: 'OpenStack resource is available',
        lastTransitionTime: now,
        observedGeneration: 1,
      });
      await kubectl([
        'patch',
        'images.openstack.k-orc.cloud',
        'ubuntu',
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status: { id: seeded.id, conditions: [condition('Available'), condition('Progressing')] } }),
      ]);
      await kubectl(['wait', `openstackservers.${group}/by-orc-image`, `--for=jsonpath={.status.resolved.imageID}=${seeded.id}`, '--timeout=60s']);
      await kubectl(['wait', `openstackservers.${group}/by-orc-image`, '--for=jsonpath={.status.ready}=true', '--timeout=60s']);
      const [instance] = await census.clients.nova.listServers({ name: 'by-orc-image' });
      expect((await census.clients.nova.getServer(instance.id)).image).toMatchObject({ id: seeded.id });

      await kubectl(['delete', `openstackservers.${group}/by-orc-image`, '--timeout=60s']);
      expect(await census.clients.nova.listServers({ name: 'by-orc-image' })).toEqual([]);
    }, 180_000);
  },
);
