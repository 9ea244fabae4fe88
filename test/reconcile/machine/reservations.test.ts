import { describe, expect, it } from 'vitest';
import { reservedResources } from '../../../src/reconcile/machine/reservations.js';

/** The worked table of the design notes (GKE columns): vCPUs, RAM in GiB, tiered CPU in millicores, tiered memory in MiB. */
const workedTable: [number, number, number, number][] = [
  [2, 4, 70, 1024],
  [4, 8, 80, 1843],
  [8, 16, 90, 2662],
  [16, 32, 110, 3645],
  [32, 64, 150, 5612],
  [64, 256, 230, 12165],
];

describe('reservedResources (gke-tiered)', () => {
  it.each(workedTable)('reserves GKE tiers for a %i vCPU / %i GiB worker, floored, plus 100Mi eviction', (vcpus, ramGiB, cpu, memory) => {
    expect(reservedResources({ vcpus, ramMiB: ramGiB * 1024, diskGiB: 40 }, 'worker')).toEqual({
      cpu: `${Math.max(100, cpu)}m`,
      memory: `${memory + 100}Mi`,
      ephemeralStorage: '500Mi',
      policy: 'gke-tiered',
    });
  });

  it('adds 100m CPU and 256Mi memory on the control plane', () => {
    expect(reservedResources({ vcpus: 16, ramMiB: 32 * 1024, diskGiB: 0 }, 'control-plane')).toEqual({
      cpu: '210m',
      memory: `${3645 + 100 + 256}Mi`,
      ephemeralStorage: '500Mi',
      policy: 'gke-tiered',
    });
  });

  it('floors tiny flavors at the Kubespray defaults', () => {
    // Below 1 GiB the tier is 255 MiB, under the 256 MiB floor.
    expect(reservedResources({ vcpus: 1, ramMiB: 512, diskGiB: 1 }, 'worker')).toMatchObject({ cpu: '100m', memory: '356Mi' });
    expect(reservedResources({ vcpus: 1, ramMiB: 1024, diskGiB: 1 }, 'worker')).toMatchObject({ cpu: '100m', memory: '356Mi' });
  });

  it('counts 0.25% per core above four', () => {
    expect(reservedResources({ vcpus: 48, ramMiB: 2048, diskGiB: 0 }, 'worker').cpu).toBe(`${80 + 44 * 2.5}m`);
    expect(reservedResources({ vcpus: 2, ramMiB: 6 * 1024, diskGiB: 0 }, 'worker').memory).toBe(`${1024 + 410 + 100}Mi`);
  });

  it('rejects impossible flavors and unknown roles with the field at fault', () => {
    expect(() => reservedResources({ vcpus: 0, ramMiB: 1024, diskGiB: 0 }, 'worker')).toThrow(
      /invalid flavor for the reservation: vcpus: vcpus must be at least 1/,
    );
    expect(() => reservedResources({ vcpus: 2, ramMiB: 1.5, diskGiB: 0 }, 'worker')).toThrow(/ramMiB/);
    expect(() => reservedResources({ vcpus: 2, ramMiB: 1024, diskGiB: -1 }, 'worker')).toThrow(/diskGiB must not be negative/);
    expect(() => reservedResources({ vcpus: 2, ramMiB: 1024, diskGiB: 0 }, 'master' as never)).toThrow(/invalid role/);
  });
});
