/**
 * Node resource reservations (`node_resources`) computed from a Nova flavor,
 * with the "gke-tiered" policy:
 *
 * - CPU: 6% of the first core, 1% of the second, 0.5% of cores 3 and 4, and
 *   0.25% of every core above 4 (GKE's published tiers).
 * - Memory: 255 MiB below 1 GiB of RAM; otherwise 25% of the first 4 GiB, 20%
 *   of the next 4, 10% of the next 8, 6% of the next 112 and 2% above 128 GiB
 *   (GKE's tiers), plus 100 MiB for the kubelet's hard eviction threshold.
 * - Floors: never less than Kubespray's default kube-reserved (100m CPU,
 *   256 MiB memory, 500 MiB ephemeral storage), which only tiny flavors hit.
 * - Control plane: +100m CPU and +256 MiB memory, the difference between
 *   Kubespray's control-plane sample and its defaults (API server and etcd).
 * - Ephemeral storage: the tiers say nothing about disks, and a flavor's disk
 *   is 0 when the node boots from a volume, so it is the Kubespray floor.
 *
 * The reservation is the whole amount kept from pods on that node; the
 * Ansible side decides how it splits between kube- and system-reserved.
 */
import { z } from 'zod';

export interface FlavorSize {
  vcpus: number;
  ramMiB: number;
  diskGiB: number;
}

/** Kubernetes quantities, plus the name of the policy that produced them (provenance). */
export interface Reservation {
  cpu: string;
  memory: string;
  ephemeralStorage: string;
  policy: string;
}

export type NodeRole = 'control-plane' | 'worker';

const reservationPolicy = 'gke-tiered';

const flavorSize = z.object({
  vcpus: z.number().int().min(1, 'vcpus must be at least 1'),
  ramMiB: z.number().int().min(1, 'ramMiB must be at least 1'),
  diskGiB: z.number().int().min(0, 'diskGiB must not be negative'),
});

const role = z.enum(['control-plane', 'worker']);

/** Millicores per core, for each band of cores: [cores in the band, millicores per core]. */
const cpuBands: [number, number][] = [
  [1, 60],
  [1, 10],
  [2, 5],
  [Infinity, 2.5],
];

/** Fraction reserved of each band of RAM: [MiB in the band, fraction]. */
const memoryBands: [number, number][] = [
  [4 * 1024, 0.25],
  [4 * 1024, 0.2],
  [8 * 1024, 0.1],
  [112 * 1024, 0.06],
  [Infinity, 0.02],
];

const smallMachineMemoryMiB = 255;
const evictionHardMiB = 100;
const floor = { cpuMillicores: 100, memoryMiB: 256, ephemeralStorageMiB: 500 };
const controlPlaneExtra = { cpuMillicores: 100, memoryMiB: 256 };

export function reservedResources(flavor: FlavorSize, nodeRole: NodeRole): Reservation {
  const size = parseOrThrow(flavorSize, flavor, 'flavor');
  const parsedRole = parseOrThrow(role, nodeRole, 'role');
  const extra = parsedRole === 'control-plane' ? controlPlaneExtra : { cpuMillicores: 0, memoryMiB: 0 };
  const cpu = Math.max(floor.cpuMillicores, tieredCpuMillicores(size.vcpus)) + extra.cpuMillicores;
  const memory = Math.max(floor.memoryMiB, tieredMemoryMiB(size.ramMiB)) + evictionHardMiB + extra.memoryMiB;
  return {
    cpu: `${Math.round(cpu)}m`,
    memory: `${Math.round(memory)}Mi`,
    ephemeralStorage: `${floor.ephemeralStorageMiB}Mi`,
    policy: reservationPolicy,
  };
}

/** GKE's CPU tiers alone, in millicores (before floors and role). */
function tieredCpuMillicores(vcpus: number): number {
  return banded(vcpus, cpuBands);
}

/** GKE's memory tiers alone, in MiB (before eviction, floors and role). */
function tieredMemoryMiB(ramMiB: number): number {
  if (ramMiB < 1024) return smallMachineMemoryMiB;
  return banded(ramMiB, memoryBands);
}

function banded(amount: number, bands: [number, number][]): number {
  let remaining = amount;
  let total = 0;
  for (const [width, rate] of bands) {
    const inBand = Math.min(remaining, width);
    total += inBand * rate;
    remaining -= inBand;
    if (remaining <= 0) break;
  }
  return total;
}

function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new Error(
      `invalid ${what} for the reservation: ${result.error.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ` : '') + i.message).join('; ')}`,
    );
  }
  return result.data;
}
