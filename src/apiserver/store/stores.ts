/**
 * The one ResourceStore of each served kind, built once by the composition root and handed to
 * everyone who reads or writes objects of the kind: the API handlers, the reconcilers' clients,
 * the Event TTL, the dashboard and the embedded Cluster API source. A kind's write path (decoding,
 * admission, conversion, validation) and what it keeps between writes (field managers, fan-out
 * conversions) then have one owner, as kube-apiserver has one registry Store per resource.
 */
import type { Storage } from '../../storage/interface.js';
import type { KindDefinition } from '../registry/kind.js';
import { ComputedStorage } from './computed-storage.js';
import { ResourceStore, type StoreAdmission } from './resource-store.js';

export class Stores {
  private readonly byKind = new Map<string, ResourceStore>();

  constructor(
    kinds: readonly KindDefinition[],
    /** What the stored kinds read and write, and the computed kinds compute from. */
    readonly storage: Storage,
    /** What every store's creates are admitted by, whoever writes them: the API's clients and the reconciler alike. */
    admission: StoreAdmission = {},
  ) {
    for (const definition of kinds) {
      // A computed kind's store reads objects computed from the storage, never the storage itself.
      const kindStorage = definition.computed ? new ComputedStorage(definition, storage) : storage;
      this.byKind.set(kindKey(definition.group, definition.kind), new ResourceStore(definition, kindStorage, admission));
    }
  }

  /** The store of a served kind's definition; any other definition (one not served, a copy) is a wiring mistake. */
  storeOf(definition: KindDefinition): ResourceStore {
    const store = this.find(definition.group, definition.kind);
    if (store?.definition !== definition) throw new Error(`${definition.kind}.${definition.group} is not a served kind's definition: it has no store`);
    return store;
  }

  /** The store of the served kind `kind` of `group`, if it is served. */
  find(group: string, kind: string): ResourceStore | undefined {
    return this.byKind.get(kindKey(group, kind));
  }
}

function kindKey(group: string, kind: string): string {
  return `${group}/${kind}`;
}
