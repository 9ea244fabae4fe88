/** The computed, read-only kinds of group extensions.capo-apiserver.io. */
import type { KindDefinition } from '../../apiserver/registry/kind.js';
import { clusterExtensionResource } from './clusterextension.js';
import { openStackNodeResource } from './openstacknode.js';

export const computedKinds: KindDefinition[] = [clusterExtensionResource, openStackNodeResource];
