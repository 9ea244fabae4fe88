/**
 * The leader lease as a coordination.k8s.io/v1 Lease in the management cluster (aggregated mode),
 * so leader election needs nothing of this server's storage and shows where Kubernetes
 * controllers' leases show (`kubectl get leases -n <namespace>`). It offers the lease lock the
 * storage contract's three calls: the Lease's resourceVersion is the revision compared on update.
 * Each call has the 10 s deadline of every call to the management cluster, so a kube-apiserver that
 * stops answering cannot hold a renewal, or the release at shutdown, forever.
 */
import { ApiException, CoordinationV1Api, type KubeConfig, type V1Lease, V1MicroTime } from '@kubernetes/client-node';
import { KeyExistsError, KeyNotFoundError, RevisionConflictError, type Entry, type JsonObject, type ListResult } from '../../storage/interface.js';
import { reviewTimeoutMs, withDeadline } from '../../apiserver/auth/delegated/deadline.js';
import type { MemberStorage } from '../runtime/shards.js';
import { parseLeaseSpec } from '../runtime/leader.js';

export class KubernetesLeaseStorage implements MemberStorage {
  private readonly api: CoordinationV1Api;

  constructor(
    kubeconfig: KubeConfig,
    private readonly namespace: string,
  ) {
    this.api = kubeconfig.makeApiClient(CoordinationV1Api);
  }

  async get(key: string): Promise<Entry | undefined> {
    try {
      return toEntry(
        key,
        await withDeadline(this.api.readNamespacedLease({ name: leaseName(key), namespace: this.namespace }), reviewTimeoutMs, 'reading the leader Lease'),
      );
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) return undefined;
      throw error;
    }
  }

  async create(key: string, value: JsonObject): Promise<Entry> {
    try {
      return toEntry(
        key,
        await withDeadline(
          this.api.createNamespacedLease({ namespace: this.namespace, body: this.body(key, value) }),
          reviewTimeoutMs,
          'creating the leader Lease',
        ),
      );
    } catch (error) {
      if (error instanceof ApiException && error.code === 409) throw new KeyExistsError(key);
      throw error;
    }
  }

  async update(key: string, value: JsonObject, expectedModRevision: number): Promise<Entry> {
    const body = this.body(key, value);
    body.metadata = { ...body.metadata, resourceVersion: String(expectedModRevision) };
    try {
      return toEntry(
        key,
        await withDeadline(
          this.api.replaceNamespacedLease({ name: leaseName(key), namespace: this.namespace, body }),
          reviewTimeoutMs,
          'renewing the leader Lease',
        ),
      );
    } catch (error) {
      if (error instanceof ApiException && error.code === 409) throw new RevisionConflictError(key, expectedModRevision, -1);
      if (error instanceof ApiException && error.code === 404) throw new KeyNotFoundError(key);
      throw error;
    }
  }

  /** The Leases of the namespace whose keys start with `prefix` (the members of a sharded reconciler). */
  async list(prefix: string): Promise<ListResult> {
    const namePrefix = leaseName(prefix);
    const list = await withDeadline(this.api.listNamespacedLease({ namespace: this.namespace }), reviewTimeoutMs, 'listing Leases');
    const entries = list.items
      .filter((lease) => lease.metadata?.name?.startsWith(namePrefix))
      .map((lease) => toEntry(`${prefix.slice(0, prefix.lastIndexOf('/') + 1)}${lease.metadata!.name}`, lease));
    return { entries, revision: Number(list.metadata?.resourceVersion ?? 0), more: false };
  }

  async delete(key: string, expectedModRevision?: number): Promise<Entry> {
    try {
      const preconditions = expectedModRevision === undefined ? undefined : { resourceVersion: String(expectedModRevision) };
      await withDeadline(
        this.api.deleteNamespacedLease({ name: leaseName(key), namespace: this.namespace, body: { preconditions } }),
        reviewTimeoutMs,
        'deleting a Lease',
      );
      return { key, value: {}, createRevision: 0, modRevision: expectedModRevision ?? 0 };
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) throw new KeyNotFoundError(key);
      if (error instanceof ApiException && error.code === 409) throw new RevisionConflictError(key, expectedModRevision ?? 0, -1);
      throw error;
    }
  }

  /** kube's Lease takes whole seconds and MicroTime timestamps (six fractional digits). */
  private body(key: string, value: JsonObject): V1Lease {
    const spec = parseLeaseSpec(value);
    if (!spec) throw new Error(`${key}: not a lease`);
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: leaseName(key), namespace: this.namespace },
      spec: {
        holderIdentity: spec.holderIdentity,
        leaseDurationSeconds: Math.ceil(spec.leaseDurationSeconds),
        acquireTime: microTime(spec.acquireTime),
        renewTime: microTime(spec.renewTime),
        leaseTransitions: spec.leaseTransitions,
      },
    };
  }
}

/** The lock keeps its lease at /leases/<name>. */
function leaseName(key: string): string {
  return key.slice(key.lastIndexOf('/') + 1);
}

/** Serialised with the six fractional digits kube-apiserver requires of a MicroTime. */
function microTime(iso: string): V1MicroTime {
  return new V1MicroTime(iso);
}

function toEntry(key: string, lease: V1Lease): Entry {
  const revision = Number(lease.metadata?.resourceVersion);
  const spec = lease.spec ?? {};
  return {
    key,
    value: {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: lease.metadata?.name, resourceVersion: String(revision) },
      spec: {
        holderIdentity: spec.holderIdentity ?? '',
        leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
        acquireTime: timestamp(spec.acquireTime),
        renewTime: timestamp(spec.renewTime),
        leaseTransitions: spec.leaseTransitions ?? 0,
      },
    },
    createRevision: 0,
    modRevision: revision,
  };
}

/** client-node types MicroTime as a Date but hands over the string it read. */
function timestamp(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  return typeof value === 'string' ? value : new Date(0).toISOString();
}
