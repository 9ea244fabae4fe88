/**
 * The kinds `npm start` serves. The CAPO kinds (group
 * infrastructure.cluster.x-k8s.io) register here as they land.
 */
import type { KindDefinition } from '../apiserver/registry/kind.js';

export const servedKinds: KindDefinition[] = [];
