/** The kinds `npm start` serves. */
import type { KindDefinition } from '../apiserver/registry/kind.js';
import { infrastructureKinds } from './infrastructure/kinds.js';

export const servedKinds: KindDefinition[] = [...infrastructureKinds];
