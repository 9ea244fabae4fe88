import { describe, expect, it } from 'vitest';
import { keysOf, namespaceOfKey } from '../../../src/apiserver/registry/keys.js';

const machines = keysOf({ group: 'infrastructure.cluster.x-k8s.io', plural: 'openstackmachines', namespaced: true });
const secrets = keysOf({ group: '', plural: 'secrets', namespaced: true });
const namespaces = keysOf({ group: '', plural: 'namespaces', namespaced: false });

describe('storage keys, as kube lays them out in etcd', () => {
  it('names a group kind under its group, and a core kind without one', () => {
    expect(machines.root).toBe('/registry/infrastructure.cluster.x-k8s.io/openstackmachines/');
    expect(secrets.key('team-a', 'cloud')).toBe('/registry/secrets/team-a/cloud');
    expect(machines.prefix('team-a')).toBe('/registry/infrastructure.cluster.x-k8s.io/openstackmachines/team-a/');
    expect(machines.prefix()).toBe(machines.root);
  });

  it('leaves the namespace out for a cluster-scoped kind', () => {
    expect(namespaces.prefix('ignored')).toBe('/registry/namespaces/');
    expect(namespaces.key(undefined, 'team-a')).toBe('/registry/namespaces/team-a');
    expect(namespaces.parse('/registry/namespaces/team-a')).toEqual({ namespace: '', name: 'team-a' });
  });

  it('reads a key back, and refuses a key of another kind or without a name', () => {
    expect(machines.nameOf(machines.key('team-a', 'worker-0'))).toEqual({ namespace: 'team-a', name: 'worker-0' });
    expect(machines.parse('/registry/infrastructure.cluster.x-k8s.io/openstackmachinesets/team-a/x')).toBeUndefined();
    expect(machines.parse(machines.prefix('team-a'))).toBeUndefined();
    expect(machines.parse(`${machines.root}worker-0`)).toBeUndefined();
    expect(() => secrets.nameOf('/registry/configmaps/team-a/x')).toThrow('/registry/configmaps/team-a/x is not a key of secrets');
  });

  it('tells the namespace of a key from its kind prefix', () => {
    expect(namespaceOfKey(machines.root, machines.key('team-a', 'demo-md-0'))).toBe('team-a');
    expect(namespaceOfKey(namespaces.root, namespaces.key(undefined, 'team-a'))).toBe('');
  });
});
