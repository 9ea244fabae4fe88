/**
 * The spec of each kind the reconcilers work on, typed from its storage version's schema: what
 * KindClient and ReconcilePass read objects as (the store validated every write against that
 * schema), so the reconcilers read their objects without casts.
 */
import type { z } from 'zod';
import type { openStackFloatingIPPoolSpec } from '../api/infrastructure/v1alpha1/openstackfloatingippool.js';
import type { openStackServerSpec } from '../api/infrastructure/v1alpha1/openstackserver.js';
import type { openStackClusterSpec } from '../api/infrastructure/v1beta2/openstackcluster.js';
import type { openStackMachineSpec } from '../api/infrastructure/v1beta2/openstackmachine.js';
import type { openStackMachineTemplateSpec } from '../api/infrastructure/v1beta2/openstackmachinetemplate.js';
import type { imageSpec } from '../api/orc/image.js';

export type ClusterSpec = z.output<typeof openStackClusterSpec>;
export type MachineSpec = z.output<typeof openStackMachineSpec>;
export type MachineTemplateSpec = z.output<typeof openStackMachineTemplateSpec>;
export type ServerSpec = z.output<typeof openStackServerSpec>;
export type FloatingIPPoolSpec = z.output<typeof openStackFloatingIPPoolSpec>;
export type ImageSpec = z.output<typeof imageSpec>;
