/**
 * OpenStackClusterTemplate v1beta1, served for clients of the older API:
 * the v1beta1 OpenStackCluster spec a ClusterClass stamps out. Unlike
 * v1beta2, the template carries no metadata of its own.
 */
import { z } from 'zod';
import type { KindVersion } from '../../../apiserver/registry/kind.js';
import { openStackClusterSpec } from './openstackcluster.js';

export const openStackClusterTemplateV1beta1: KindVersion = {
  name: 'v1beta1',
  served: true,
  storage: false,
  schema: z
    .object({
      spec: z
        .object({
          template: z
            .object({ spec: openStackClusterSpec.describe('The spec of each OpenStackCluster created from the template.') })
            .describe('The OpenStackCluster to create.'),
        })
        .optional()
        .describe('The template.'),
    })
    .describe('A template of OpenStackCluster, for ClusterClass.'),
  printerColumns: [],
};
