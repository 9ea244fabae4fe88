/**
 * Loading a kubeconfig for the management cluster: from a file, or else as client-go finds one
 * ($KUBECONFIG, ~/.kube/config, then the pod's service account). Shared by the Cluster API source
 * and the composition root's delegated authentication and authorization.
 */
import { KubeConfig } from '@kubernetes/client-node';

export function loadKubeconfig(path: string | undefined): KubeConfig {
  const config = new KubeConfig();
  const where = path ?? '(default)';
  try {
    if (path === undefined) config.loadFromDefault();
    else config.loadFromFile(path);
  } catch (error) {
    throw new Error(`cannot load kubeconfig ${where}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error(`kubeconfig ${where} has no current context with a cluster`);
  // What client-node settles for when it finds no configuration at all; it refuses plain HTTP anyway.
  if (path === undefined && cluster.server === 'http://localhost:8080') {
    throw new Error('no kubeconfig found: set KUBECONFIG, create ~/.kube/config, or run in a pod with a service account');
  }
  return config;
}
