/**
 * Cluster API's IPAM contract, v1beta2, as its CRDs shape it: an
 * IPAddressClaim asks a pool (an OpenStackFloatingIPPool here) for an
 * address, and the pool's provider answers with an IPAddress named after the
 * claim and points the claim's status at it.
 */
import { z } from 'zod';
import type { KindVersion } from '../../apiserver/registry/kind.js';
import { condition } from '../infrastructure/v1beta2/common.js';
import { contractReference, preserved } from './references.js';

const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const localName = (description: string) =>
  z.object({ name: z.string().min(1).max(253).regex(dns1123Subdomain).describe('Name of the object, in the same namespace.') }).describe(description);

const claimSpec = z
  .object({
    clusterName: z.string().min(1).max(63).optional().describe('Name of the Cluster the claim belongs to.'),
    poolRef: contractReference('The pool to take the address from, e.g. an OpenStackFloatingIPPool.'),
  })
  .describe('Which pool the address is claimed from.');

const claimStatus = z
  .object({
    addressRef: localName('The IPAddress the pool made for this claim.').optional(),
    conditions: z
      .array(condition)
      .max(32)
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] })
      .optional()
      .describe('State of the claim; Ready is the known type.'),
    deprecated: preserved('Fields kept for clients of v1beta1.').optional(),
  })
  .meta({ minProperties: 1 })
  .describe('Which address answers the claim.');

export const ipAddressClaimV1beta2: KindVersion = {
  name: 'v1beta2',
  served: true,
  storage: true,
  schema: z.object({ spec: claimSpec, status: claimStatus.optional() }).describe('A request for an IP address from a pool.'),
  printerColumns: [
    { name: 'Pool Name', type: 'string', jsonPath: '.spec.poolRef.name', description: 'Pool the address is claimed from.' },
    { name: 'Pool Kind', type: 'string', jsonPath: '.spec.poolRef.kind', description: 'Kind of that pool.' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the claim was created.' },
  ],
};

const address = (description: string) => z.string().min(1).max(39).describe(description);

const addressSpec = z
  .object({
    address: address('The IP address.'),
    claimRef: localName('The claim the address was made for.'),
    poolRef: contractReference('The pool the address comes from.'),
    prefix: z.int().min(0).max(128).meta({ format: 'int32' }).describe('Prefix length of the address (32 for one IPv4 address).'),
    gateway: address('Gateway of the network the address is on.').optional(),
  })
  .describe('The address and where it comes from.');

export const ipAddressV1beta2: KindVersion = {
  name: 'v1beta2',
  served: true,
  storage: true,
  schema: z.object({ spec: addressSpec }).describe('An IP address a pool handed out for a claim.'),
  printerColumns: [
    { name: 'Address', type: 'string', jsonPath: '.spec.address', description: 'The address.' },
    { name: 'Pool Name', type: 'string', jsonPath: '.spec.poolRef.name', description: 'Pool the address is from.' },
    { name: 'Pool Kind', type: 'string', jsonPath: '.spec.poolRef.kind', description: 'Kind of that pool.' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the address was handed out.' },
  ],
};
