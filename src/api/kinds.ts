/** The kinds the server serves: everything in the embedded mode, only what it owns behind kube-apiserver. */
import type { KindDefinition } from '../apiserver/registry/kind.js';
import { computedKinds } from './computed/kinds.js';
import { embeddedClusterApiKinds } from './embedded/kinds.js';
import { infrastructureKinds } from './infrastructure/kinds.js';

export const servedKinds: KindDefinition[] = [...infrastructureKinds, ...embeddedClusterApiKinds, ...computedKinds];

/** Behind kube-apiserver, core Secrets and Cluster API kinds are the management cluster's. */
export const aggregatedKinds: KindDefinition[] = [...infrastructureKinds, ...computedKinds];
