/**
 * The extensions this simulator implements, as Neutron describes them in
 * GET /v2.0/extensions (a subset of what ministack's Neutron loads; clients
 * such as CAPO feature-detect `trunk` and `standard-attr-tag` here).
 */
import type { NeutronOptions } from './store.js';

export interface Extension {
  alias: string;
  name: string;
  description: string;
  updated: string;
  links: never[];
}

const ext = (alias: string, name: string, description: string, updated: string): Extension => ({ alias, name, description, updated, links: [] });

const zedExtensions: readonly Extension[] = [
  ext('allowed-address-pairs', 'Allowed Address Pairs', 'Provides allowed address pairs', '2013-07-23T10:00:00-00:00'),
  ext('binding', 'Port Binding', 'Expose port bindings of a virtual port to external application', '2014-02-03T10:00:00-00:00'),
  ext('empty-string-filtering', 'Empty String Filtering Extension', 'Allow filtering by attributes with empty string value', '2018-05-01T10:00:00-00:00'),
  ext('external-net', 'Neutron external network', 'Adds external network attribute to network resource.', '2013-01-14T10:00:00-00:00'),
  ext(
    'ext-gw-mode',
    'Neutron L3 Configurable external gateway mode',
    'Extension of the router abstraction for specifying whether SNAT should occur on the external gateway',
    '2013-03-28T10:00:00-00:00',
  ),
  ext(
    'extra_dhcp_opt',
    'Neutron Extra DHCP options',
    'Extra options configuration for DHCP. For example PXE boot options to DHCP clients can be specified (e.g. tftp-server, server-ip-address, bootfile-name)',
    '2013-03-17T12:00:00-00:00',
  ),
  ext('extraroute', 'Neutron Extra Route', 'Extra routes configuration for L3 router', '2013-02-01T10:00:00-00:00'),
  ext('filter-validation', 'Filter parameters validation', 'Provides validation on filter parameters.', '2018-07-04T10:00:00-00:00'),
  ext('fip-port-details', 'Floating IP Port Details Extension', 'Add port_details attribute to Floating IP resource', '2018-04-09T10:00:00-00:00'),
  ext('net-mtu', 'Network MTU', 'Provides MTU attribute for a network resource.', '2015-03-25T10:00:00-00:00'),
  ext('net-mtu-writable', 'Network MTU (writable)', 'Provides a writable MTU attribute for a network resource.', '2017-07-12T00:00:00-00:00'),
  ext('pagination', 'Pagination support', 'Extension that indicates that pagination is enabled.', '2016-06-12T00:00:00-00:00'),
  ext('port-security', 'Port Security', 'Provides port security', '2012-07-23T10:00:00-00:00'),
  ext(
    'port-security-groups-filtering',
    'Port filtering on security groups',
    'Provides security groups filtering when listing ports',
    '2018-01-09T09:00:00-00:00',
  ),
  ext('project-id', 'project_id field enabled', 'Extension that indicates that project_id field is enabled.', '2016-09-09T09:09:09-09:09'),
  ext('provider', 'Provider Network', 'Expose mapping of virtual networks to physical networks', '2012-09-07T10:00:00-00:00'),
  ext('quota_details', 'Quota details management support', 'Expose functions for quotas usage statistics per project', '2017-02-10T10:00:00-00:00'),
  ext('quotas', 'Quota management support', 'Expose functions for quotas management per project', '2012-07-29T10:00:00-00:00'),
  ext(
    'router',
    'Neutron L3 Router',
    'Router abstraction for basic L3 forwarding between L2 Neutron networks and access to external networks via a NAT gateway.',
    '2012-07-20T10:00:00-00:00',
  ),
  ext('security-group', 'security-group', 'The security groups extension.', '2012-10-05T10:00:00-00:00'),
  ext(
    'security-groups-normalized-cidr',
    'Normalized CIDR field for security group rules',
    'Add new field with normalized remote_ip_prefix cidr in SG rule',
    '2020-07-28T10:00:00-00:00',
  ),
  ext('sorting', 'Sorting support', 'Extension that indicates that sorting is enabled.', '2016-06-12T00:00:00-00:00'),
  ext('standard-attr-description', 'standard-attr-description', 'Extension to add descriptions to standard attributes', '2016-02-10T10:00:00-00:00'),
  ext(
    'standard-attr-revisions',
    'Resource revision numbers',
    'This extension will display the revision number of neutron resources.',
    '2016-04-11T10:00:00-00:00',
  ),
  ext(
    'standard-attr-tag',
    'Tag support for resources with standard attribute: subnet, trunk, router, network, port, security_group, floatingip',
    'Enables to set tag on resources with standard attribute.',
    '2017-01-01T00:00:00-00:00',
  ),
  ext(
    'standard-attr-timestamp',
    'Resource timestamps',
    'Adds created_at and updated_at fields to all Neutron resources that have Neutron standard attributes.',
    '2016-09-12T10:00:00-00:00',
  ),
  ext('stateful-security-group', 'Stateful security group', 'Indicates if the security group is stateful or not', '2019-11-26T09:00:00-00:00'),
  ext('trunk', 'Trunk Extension', 'Provides support for trunk ports', '2016-01-01T10:00:00-00:00'),
  ext('trunk-details', 'Trunk port details', 'Expose trunk port details', '2016-01-01T10:00:00-00:00'),
];

const tagCreation = ext('tag-creation', 'Tag support for resource creation', 'Enables to set tag on resources during creation.', '2024-01-30T00:00:00-00:00');

/** What GET /v2.0/extensions lists: Zed's set, and `tag-creation` where the simulated Neutron has it. */
export function loadedExtensions(options: NeutronOptions): readonly Extension[] {
  return options.tagCreation ? [...zedExtensions, tagCreation].sort((a, b) => (a.alias < b.alias ? -1 : 1)) : zedExtensions;
}
