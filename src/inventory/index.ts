/**
 * The inventory: cluster and node variables computed from stored CAPO
 * objects, for the computed kinds, GraphQL, the admin API and Ansible.
 */
export type { InventorySnapshot } from './model.js';
export { clusterNameOf, indexOf } from './model.js';
export { readInventorySnapshot } from './snapshot.js';
export { clusterExtensionsOf, servedClusterExtensionOf, withoutSshKeyReference } from './cluster-extensions.js';
export { openStackNodesOf, openStackNodeOf } from './nodes.js';
export {
  ansibleInventory,
  toAnsibleListJson,
  UnknownClusterError,
  InventoryNameConflictError,
  sshPrivateKeySecretVar,
  type AnsibleInventory,
} from './ansible.js';
