/**
 * OpenStackFloatingIPPool v1alpha1: a Cluster API IPAM pool that hands out
 * Neutron floating IPs to machines through IPAddressClaims.
 */
import { z } from 'zod';
import type { KindVersion } from '../../../apiserver/registry/kind.js';
import { identityReference } from '../v1beta1/common.js';
import { condition, networkParam, resourceStatuses } from '../v1beta2/common.js';

const { networkStatus } = resourceStatuses;

export const openStackFloatingIPPoolSpec = z
  .object({
    identityRef: identityReference.describe('Credentials to manage the floating IPs with.'),
    floatingIPNetwork: networkParam.optional().describe('External network to allocate floating IPs on. The only external network when omitted.'),
    preAllocatedFloatingIPs: z
      .array(z.string())
      .optional()
      .describe('Existing floating IPs to hand out before allocating new ones; they are kept when the pool is deleted.'),
    maxIPs: z.int().optional().describe('Most floating IPs the pool holds at once; no limit when omitted.'),
    reclaimPolicy: z.enum(['Retain', 'Delete']).describe('What happens to a floating IP a machine releases: kept in OpenStack (Retain) or deleted (Delete).'),
  })
  .describe('Where floating IPs come from and how they are reclaimed.');

const status = z
  .object({
    claimedIPs: z.array(z.string()).default([]).describe('Floating IPs handed out.'),
    availableIPs: z.array(z.string()).default([]).describe('Floating IPs ready to hand out.'),
    failedIPs: z.array(z.string()).optional().describe('Floating IPs that could not be allocated.'),
    floatingIPNetwork: networkStatus.optional().describe('The network floating IPs are allocated on.'),
    conditions: z.array(condition).optional().describe('State of the pool.'),
  })
  .describe('Observed state of the pool.');

export const openStackFloatingIPPoolV1alpha1: KindVersion = {
  name: 'v1alpha1',
  served: true,
  storage: true,
  schema: z
    .object({ spec: openStackFloatingIPPoolSpec.optional(), status: status.optional() })
    .describe('A pool of Neutron floating IPs that machines claim addresses from.'),
  printerColumns: [],
};
