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
import type { JsonObject } from '../../storage/interface.js';
import type { CloudConnection } from '../cloud.js';
import type { Reconcile } from '../runtime/controller.js';
import type { ReconcilerDeps } from '../deps.js';
import { authenticate } from '../lifecycle.js';
import { flavorById, flavorReference, resolveFlavorId, resolveImageId, type ImageParam, type ImageRefResolver } from '../lookups.js';
import { imageRefResolver } from '../image/reconciler.js';
import { metaOf } from '../objects.js';
import { clusterGate, setPaused } from '../paused.js';
import { ReconcilePass } from '../reconcile-pass.js';

interface TemplateMachineSpec {
  flavor?: { id?: string; filter?: { name?: string } };
  image?: ImageParam;
  rootVolume?: { sizeGiB?: number };
  identityRef?: unknown;
}

/** An image's properties do not change under its ID; the resync reads them again after this. */
const imageTtlMs = 10 * 60_000;
const MiB = 2 ** 20;
const GiB = 2 ** 30;

export function openStackMachineTemplateReconciler(deps: ReconcilerDeps): Reconcile {
  const { templates } = deps;
  return async (key) => {
    const name = templates.nameOf(key);
    const object = await templates.get(name);
    if (!object || metaOf(object).deletionTimestamp !== undefined) return {};
    const gate = await clusterGate(deps.source, object);
    // Without an owner Cluster (a ClusterClass's template, or one applied ahead of its Cluster) there is nothing to report.
    if (!gate.open && gate.reason === 'WaitingForCluster') return {};
    const pass = new ReconcilePass(templates, object, deps);
    pass.observe((status) => setPaused(status, pass.generation, gate));
    if (!gate.open) return pass.finish(undefined, { type: 'Ready', reason: 'OpenStackError' });

    const spec = (((object.spec as JsonObject | undefined)?.template as JsonObject | undefined)?.spec ?? {}) as TemplateMachineSpec;
    let error: unknown;
    try {
      const openStackCluster = await deps.clusters.get({ namespace: name.namespace, name: gate.cluster.infrastructureRef?.name ?? gate.cluster.name });
      const identityRef = spec.identityRef ?? (openStackCluster?.spec as JsonObject | undefined)?.identityRef;
      if (identityRef === undefined) {
        pass.condition({
          type: 'Ready',
          status: 'False',
          reason: 'WaitingForClusterInfrastructure',
          message: 'no identityRef in the template, and no OpenStackCluster to take it from yet',
        });
      } else {
        const cloud = await authenticate(deps, pass, identityRef);
        await reportCapacity(pass, cloud, spec, imageRefResolver(deps.readOrcImage, name.namespace));
        pass.condition({ type: 'Ready', status: 'True', reason: 'Ready' });
      }
    } catch (thrown) {
      error = thrown;
    }
    return pass.finish(error, { type: 'Ready', reason: 'OpenStackError' });
  };
}

async function reportCapacity(pass: ReconcilePass, cloud: CloudConnection, spec: TemplateMachineSpec, imageRefs: ImageRefResolver): Promise<void> {
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
