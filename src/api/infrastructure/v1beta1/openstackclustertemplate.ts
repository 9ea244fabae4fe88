/**
 * OpenStackClusterTemplate v1beta1, served for clients of the older API:
 * the v1beta1 OpenStackCluster spec a ClusterClass stamps out. Unlike
 * v1beta2, the template carries no metadata of its own.
 */
import type { KindVersion } from '../../../apiserver/registry/kind.js';
import { templateSpecOf, variant } from '../v1beta2/common.js';
import { openStackClusterTemplateV1beta2 } from '../v1beta2/openstackclustertemplate.js';
import { openStackClusterSpec } from './openstackcluster.js';

export const openStackClusterTemplateV1beta1: KindVersion = {
  name: 'v1beta1',
  served: true,
  storage: false,
  schema: variant(openStackClusterTemplateV1beta2.schema, (schema) =>
    schema.extend({ spec: templateSpecOf('OpenStackCluster', openStackClusterSpec).optional() }),
  ),
  printerColumns: [],
};
