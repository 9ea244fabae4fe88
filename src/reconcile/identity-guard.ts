/**
 * Keeps an identity Secret from disappearing while objects still need it to
 * delete their OpenStack resources: `kubectl delete -f` removes the Secret
 * in the same breath as the cluster, and without credentials the cluster's
 * network, load balancer and servers would leak. The Secret gets a finalizer
 * while any of our objects uses it, and loses it once the last user is gone
 * (ORC protects its credential Secrets the same way).
 */
import { isJsonObject } from '../storage/json.js';
import type { JsonObject } from '../storage/interface.js';
import { metaOf, referenceName, specOf, stringField, type KindClient } from './objects.js';
import type { ObjectName } from '../storage/interface.js';

export const identityFinalizer = 'capo-apiserver.io/identity-in-use';

/** Writes finalizers on Secrets; where the Secrets live decides how. */
export interface SecretFinalizers {
  add(secret: ObjectName, finalizer: string): Promise<void>;
  remove(secret: ObjectName, finalizer: string): Promise<void>;
}

/** For the embedded default, where Secrets are objects of this server. */
export function storageSecretFinalizers(secrets: KindClient): SecretFinalizers {
  const update = async (secret: ObjectName, change: (finalizers: string[]) => string[]) => {
    const object = await secrets.get(secret);
    if (!object) return;
    await secrets.update({ ...secret, uid: metaOf(object).uid }, (current) => {
      const meta = metaOf(current);
      const next = change(meta.finalizers ?? []);
      if (next.length === 0) delete meta.finalizers;
      else meta.finalizers = next;
    });
  };
  return {
    add: (secret, finalizer) => update(secret, (finalizers) => (finalizers.includes(finalizer) ? finalizers : [...finalizers, finalizer])),
    remove: (secret, finalizer) => update(secret, (finalizers) => finalizers.filter((candidate) => candidate !== finalizer)),
  };
}

/**
 * The identity Secret an object names: CAPO's identityRef (type Secret only: a
 * ClusterIdentity's Secret is shared across namespaces and managed by its
 * owner), or an ORC object's cloudCredentialsRef.
 */
export function identitySecretOf(object: JsonObject, fallback?: JsonObject): ObjectName | undefined {
  const spec = specOf(object);
  const credentials = isJsonObject(spec.cloudCredentialsRef) ? stringField(spec.cloudCredentialsRef, 'secretName') : undefined;
  if (credentials) return { namespace: metaOf(object).namespace, name: credentials };
  const ref = spec.identityRef ?? (fallback && specOf(fallback).identityRef);
  const name = referenceName(ref);
  if (!name || !isJsonObject(ref) || (ref.type ?? 'Secret') !== 'Secret') return undefined;
  return { namespace: metaOf(object).namespace, name };
}

export class IdentityGuard {
  private readonly protectedSecrets = new Set<string>();

  constructor(
    private readonly finalizers: SecretFinalizers | undefined,
    /** Every kind whose objects may name an identity Secret. */
    private readonly users: KindClient[],
  ) {}

  /** Adds the finalizer once per Secret and process (a restart re-adds, harmlessly). */
  async protect(secret: ObjectName | undefined): Promise<void> {
    if (!this.finalizers || !secret) return;
    const key = `${secret.namespace}/${secret.name}`;
    if (this.protectedSecrets.has(key)) return;
    await this.finalizers.add(secret, identityFinalizer);
    this.protectedSecrets.add(key);
  }

  /** Called as `leaving` drops its finalizer: releases the Secret if no other object of ours still uses it. */
  async release(secret: ObjectName | undefined, leaving: JsonObject): Promise<void> {
    if (!this.finalizers || !secret) return;
    const leavingUid = metaOf(leaving).uid;
    for (const client of this.users) {
      for (const object of await client.list(secret.namespace)) {
        if (metaOf(object).uid === leavingUid) continue;
        const used = identitySecretOf(object);
        if (used?.name === secret.name) return;
      }
    }
    this.protectedSecrets.delete(`${secret.namespace}/${secret.name}`);
    await this.finalizers.remove(secret, identityFinalizer);
  }
}
