/**
 * What each step of the OpenStackCluster reconciler is handed: the pass it
 * records into, the cluster's spec, its name and the cloud. The steps and the
 * reconciler that sequences them share it from here, so steps never import
 * the reconciler.
 */
import type { CloudConnection } from '../cloud.js';
import type { ReconcilerDeps } from '../deps.js';
import type { ObjectName } from '../../storage/interface.js';
import type { ClusterSpec } from '../kinds.js';
import type { ReconcilePass } from '../reconcile-pass.js';

/** Everything a step needs: the pass (status, records, waits), the spec and the cloud. */
export interface ClusterContext {
  pass: ReconcilePass<ClusterSpec>;
  spec: ClusterSpec;
  cluster: ObjectName;
  cloud: CloudConnection;
  deps: ReconcilerDeps;
}
