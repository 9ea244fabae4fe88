/**
 * A read-only kind of group extensions.capo-apiserver.io whose objects are
 * computed from an InventorySnapshot of the stored CAPO objects.
 */
import { z } from 'zod';
import type { KindDefinition, PrinterColumn } from '../../apiserver/registry/kind.js';
import type { JsonObject } from '../../storage/interface.js';
import type { ObjectName } from '../../storage/interface.js';
import type { InventorySnapshot } from '../model.js';
import { inventoryKinds, snapshotOf } from '../snapshot.js';
import { computedGroup, computedVersion } from '../computed-group.js';

export interface InventoryKindOptions {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  description: string;
  spec: z.ZodType;
  status: z.ZodType;
  printerColumns: PrinterColumn[];
  /** The objects a snapshot yields, by name. */
  namesIn(snapshot: InventorySnapshot): ObjectName[];
  compute(snapshot: InventorySnapshot, namespace: string, name: string): JsonObject | undefined;
  affectedBy(snapshot: InventorySnapshot, input: JsonObject): ObjectName[];
}

export function inventoryKind(options: InventoryKindOptions): KindDefinition {
  const { kind, plural, singular, shortNames, namesIn, compute, affectedBy } = options;
  return {
    group: computedGroup,
    kind,
    plural,
    singular,
    shortNames,
    namespaced: true,
    versions: [
      {
        name: computedVersion,
        served: true,
        storage: true,
        schema: z.object({ spec: options.spec.optional(), status: options.status.optional() }).describe(options.description),
        printerColumns: options.printerColumns,
      },
    ],
    subresources: { status: false },
    verbs: ['get', 'list', 'watch'],
    computed: {
      inputs: inventoryKinds,
      computeAll: (inputs) => {
        const snapshot = snapshotOf(inputs);
        return namesIn(snapshot).flatMap(({ namespace, name }): JsonObject[] => {
          const object = compute(snapshot, namespace, name);
          return object ? [object] : [];
        });
      },
      computeOne: (inputs, namespace, name) => compute(snapshotOf(inputs), namespace, name),
      affectedBy: (inputs, input) => affectedBy(snapshotOf(inputs), input),
    },
  };
}
