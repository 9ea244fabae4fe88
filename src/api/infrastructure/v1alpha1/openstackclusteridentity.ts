/**
 * OpenStackClusterIdentity v1alpha1: cluster-scoped credentials that clusters
 * in the namespaces it admits can use without a Secret of their own.
 */
import { z } from 'zod';
import type { KindVersion } from '../../../apiserver/registry/kind.js';

const labelSelectorRequirement = z
  .object({
    key: z.string().describe('The label key.'),
    operator: z.string().describe('How the label value relates to values: In, NotIn, Exists or DoesNotExist.'),
    values: z
      .array(z.string())
      .meta({ 'x-kubernetes-list-type': 'atomic' })
      .optional()
      .describe('Values for In and NotIn (at least one); empty for Exists and DoesNotExist.'),
  })
  .describe('A label requirement.');

const namespaceSelector = z
  .object({
    matchLabels: z.record(z.string(), z.string()).optional().describe('Labels the namespace must carry with these values.'),
    matchExpressions: z
      .array(labelSelectorRequirement)
      .meta({ 'x-kubernetes-list-type': 'atomic' })
      .optional()
      .describe('Requirements the namespace labels must all meet.'),
  })
  .meta({ 'x-kubernetes-map-type': 'atomic' })
  .describe('Namespaces allowed to use the identity, by label; all namespaces when omitted. Both parts must match.');

const spec = z
  .object({
    secretRef: z
      .object({
        name: z.string().describe('Name of the Secret; it holds `clouds.yaml` and optionally `cacert`.'),
        namespace: z.string().describe('Namespace of the Secret.'),
      })
      .describe('The Secret holding the credentials.'),
    namespaceSelector: namespaceSelector.optional(),
  })
  .describe('The credentials and who may use them.');

export const openStackClusterIdentityV1alpha1: KindVersion = {
  name: 'v1alpha1',
  served: true,
  storage: true,
  schema: z
    .object({ spec: spec.optional() })
    .describe('OpenStack credentials shared across namespaces, referenced from identityRef with type ClusterIdentity.'),
  printerColumns: [],
};
