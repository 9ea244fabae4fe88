/**
 * OpenStackClusterTemplate v1beta2, the storage version: the
 * OpenStackCluster a ClusterClass stamps out for each of its clusters.
 */
import { z } from 'zod';
import type { KindVersion } from '../../../apiserver/registry/kind.js';
import { templateSpecOf } from './common.js';
import { openStackClusterSpec } from './openstackcluster.js';

const templateMetadata = z
  .object({
    labels: z.record(z.string(), z.string()).optional().describe('Labels to put on the created objects.'),
    annotations: z.record(z.string(), z.string()).optional().describe('Annotations to put on the created objects.'),
  })
  .meta({ minProperties: 1 })
  .describe('Labels and annotations of the objects created from the template.');

export const openStackClusterTemplateV1beta2: KindVersion = {
  name: 'v1beta2',
  served: true,
  storage: true,
  schema: z
    .object({
      spec: templateSpecOf('OpenStackCluster', openStackClusterSpec, {
        metadata: templateMetadata.optional(),
      }).optional(),
    })
    .describe('A template of OpenStackCluster, for ClusterClass.'),
  printerColumns: [],
};
