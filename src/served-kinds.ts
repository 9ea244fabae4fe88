/** The kinds the server serves: everything in the embedded mode, only what it owns behind kube-apiserver. */
import type { KindDefinition } from './apiserver/registry/kind.js';
import { computedKinds } from './inventory/kinds/kinds.js';
import { embeddedClusterApiKinds } from './api/embedded/kinds.js';
import { infrastructureKinds } from './api/infrastructure/kinds.js';
import { orcKinds } from './api/orc/kinds.js';

export const servedKinds: KindDefinition[] = [...infrastructureKinds, ...orcKinds, ...embeddedClusterApiKinds, ...computedKinds];

/** Behind kube-apiserver, core Secrets and Cluster API kinds are the management cluster's; ORC's Image is served unless ORC is installed there. */
export const aggregatedKinds: KindDefinition[] = [...infrastructureKinds, ...orcKinds, ...computedKinds];

/** With --orc-images=external: ORC, installed in the management cluster, serves its Image itself. */
export const aggregatedKindsBesideOrc: KindDefinition[] = aggregatedKinds.filter((kind) => !orcKinds.includes(kind));
