/**
 * The OpenStackMachineTemplate reconciler: reports what one machine stamped
 * from the template has, so that the cluster autoscaler can scale a
 * MachineDeployment up from zero, when there is no node yet to look at.
 *
 * As CAPO: only templates of a Cluster (a ClusterClass's own templates are
 * left alone), the credentials of the template or else of the cluster;
 * `status.capacity` from the flavor (cpu, memory, ephemeral-storage, and
 * storage: the root volume's size, else the flavor's disk) and
 * `status.nodeInfo.operatingSystem` from the image's `os_type` property.
 * Nothing is created in OpenStack, so there is no finalizer.
 */
import type { CloudConnection } from '../cloud.js';
import type { Reconcile } from '../runtime/controller.js';
import type { ReconcilerDeps } from '../deps.js';
import { authenticate } from '../lifecycle.js';
import { flavorById, flavorReference, resolveFlavorId, resolveImageId, type ImageRefResolver } from '../lookups.js';
import { imageRefResolver } from '../image/reconciler.js';
import type { MachineSpec, MachineTemplateSpec } from '../kinds.js';
import { objectReconciler } from '../object-reconciler.js';
import { clusterGate, setPaused } from '../paused.js';
import type { ReconcilePass } from '../reconcile-pass.js';

/** An image's properties do not change under its ID; the resync reads them again after this. */
const imageTtlMs = 10 * 60_000;
const MiB = 2 ** 20;
const GiB = 2 ** 30;

/** What a template's pass works with: the machine spec it stamps, and the credentials to read the flavor and image with. */
interface TemplateContext {
  pass: ReconcilePass<MachineTemplateSpec>;
  spec: MachineSpec;
  identityRef: MachineSpec['identityRef'];
}

export function openStackMachineTemplateReconciler(deps: ReconcilerDeps): Reconcile {
  return objectReconciler(deps, {
    client: deps.templates,
    // Without an owner Cluster (a ClusterClass's template, or one applied ahead of its Cluster) there is nothing to report.
    gate: (object) => clusterGate(deps.source, object),
    begin: async (pass, gate): Promise<TemplateContext> => {
      pass.observe((status) => setPaused(status, pass.generation, gate));
      const spec = pass.spec.template.spec;
      // Open: a template has no finalizer, so a deleting one is given no pass.
      const cluster = gate.open ? gate.cluster : undefined;
      const openStackCluster = cluster && (await deps.clusters.get({ namespace: pass.meta.namespace, name: cluster.infrastructureRef?.name ?? cluster.name }));
      return { pass, spec, identityRef: spec.identityRef ?? openStackCluster?.spec.identityRef };
    },
    normal: async ({ pass, spec, identityRef }) => {
      if (identityRef === undefined) {
        pass.condition({
          type: 'Ready',
          status: 'False',
          reason: 'WaitingForClusterInfrastructure',
          message: 'no identityRef in the template, and no OpenStackCluster to take it from yet',
        });
        return;
      }
      const cloud = await authenticate(deps, pass, identityRef);
      await reportCapacity(pass, cloud, spec, imageRefResolver(deps.readOrcImage, pass.meta.namespace));
      pass.condition({ type: 'Ready', status: 'True', reason: 'Ready' });
    },
    // No finalizer: a deleting template is never given a pass.
    remove: async () => true,
  });
}

async function reportCapacity(pass: ReconcilePass, cloud: CloudConnection, spec: MachineSpec, imageRefs: ImageRefResolver): Promise<void> {
  const { glance } = cloud.clients;
  const flavor = await flavorById(cloud, await resolveFlavorId(cloud, flavorReference(spec.flavor)));
  const capacity: Record<string, string> = { cpu: String(flavor.vcpus), memory: binaryQuantity(flavor.ram * MiB) };
  const ephemeralGiB = flavor['OS-FLV-EXT-DATA:ephemeral'] ?? 0;
  if (ephemeralGiB > 0) capacity['ephemeral-storage'] = binaryQuantity(ephemeralGiB * GiB);
  const storageGiB = spec.rootVolume?.sizeGiB !== undefined && spec.rootVolume.sizeGiB > 0 ? spec.rootVolume.sizeGiB : flavor.disk;
  if (storageGiB > 0) capacity.storage = binaryQuantity(storageGiB * GiB);

  pass.observe((status) => {
    status.capacity = capacity;
  });
  // The capacity stands while an ORC Image is still on its way.
  if (!spec.image) return;
  const imageId = await resolveImageId(cloud, spec.image, imageRefs);
  const operatingSystem = (await cloud.memo(`image-by-id:${imageId}`, imageTtlMs, () => glance.getImage(imageId))).os_type;
  pass.observe((status) => {
    if (operatingSystem) status.nodeInfo = { operatingSystem };
    else delete status.nodeInfo;
  });
}

/** A byte count as Kubernetes prints a BinarySI quantity: the largest power-of-1024 suffix that divides it exactly. */
function binaryQuantity(bytes: number): string {
  const suffixes = ['Ei', 'Pi', 'Ti', 'Gi', 'Mi', 'Ki'];
  for (const [index, suffix] of suffixes.entries()) {
    const unit = 1024 ** (suffixes.length - index);
    if (bytes !== 0 && bytes % unit === 0) return `${bytes / unit}${suffix}`;
  }
  return String(bytes);
}
