/** The kinds `npm start` serves. */
import type { KindDefinition } from '../apiserver/registry/kind.js';
import { computedKinds } from './computed/kinds.js';
import { embeddedClusterApiKinds } from './embedded/kinds.js';
import { infrastructureKinds } from './infrastructure/kinds.js';

export const servedKinds: KindDefinition[] = [...infrastructureKinds, ...embeddedClusterApiKinds, ...computedKinds];
