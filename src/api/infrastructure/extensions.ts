/**
 * Additive extension fields on CAPO kinds for the Ansible bootstrap. They
 * live under `spec.extensions` (user inputs) and `status.extensions` (values
 * the reconciler computes), are optional everywhere, and are identical in
 * every served version, so they survive conversion unchanged. CAPO's own
 * fields are never reinterpreted.
 */
import { z } from 'zod';

const interfaceName = z
  .string()
  .min(1)
  .max(15)
  .regex(/^[a-zA-Z0-9][a-zA-Z0-9._-]*$/, 'must be a Linux network interface name')
  .describe('A Linux network interface name on the node, such as eth0 or ens3 (at most 15 characters).');

const ipAddress = z.string().min(1).describe('An IPv4 or IPv6 address.');

const endpoint = z.string().min(1).describe('A service endpoint URL from the Keystone catalog of the cluster identity.');

export const clusterSpecExtensions = z
  .object({
    networking: z
      .object({
        kubeNetworkPlugin: z
          .enum(['cilium', 'calico', 'flannel', 'kube-ovn', 'cni'])
          .optional()
          .describe('The CNI plugin the bootstrap installs (kube_network_plugin).'),
      })
      .optional()
      .describe('Cluster networking choices made by the user or the ClusterClass.'),
    networkInterfaces: z
      .object({
        flannel: interfaceName.optional().describe('Interface flannel binds to on every node (flannel_interface).'),
      })
      .optional()
      .describe('Node network interfaces the bootstrap configures, per cluster.'),
    platform: z
      .object({
        ntp: z
          .object({
            servers: z
              .array(z.string().min(1))
              .meta({ 'x-kubernetes-list-type': 'atomic' })
              .optional()
              .describe('NTP servers the nodes use, in order of preference. When empty, the reconciler uses the management host.'),
          })
          .optional()
          .describe('Time synchronisation of the nodes.'),
      })
      .optional()
      .describe('Platform services the nodes rely on.'),
    loadBalancers: z
      .object({
        ingress: z
          .object({
            enabled: z.boolean().optional().describe('Whether the reconciler creates a load balancer for ingress traffic (and the Harbor address).'),
            ports: z
              .array(z.number().int().min(1).max(65535))
              .meta({ 'x-kubernetes-list-type': 'set' })
              .optional()
              .describe('Ports the ingress load balancer listens on. Defaults to 80 and 443.'),
          })
          .optional()
          .describe('The ingress load balancer.'),
      })
      .optional()
      .describe('Load balancers beyond the API server one.'),
    ssh: z
      .object({
        user: z
          .string()
          .min(1)
          .max(32)
          .regex(/^[a-z_][a-z0-9_-]*\$?$/, 'must be a Linux user name')
          .optional()
          .describe('User Ansible logs in as on the nodes and the bastion (ansible_user).'),
        privateKeySecretRef: z
          .object({
            name: z.string().min(1).describe('Name of the Secret, in the namespace of the cluster.'),
            key: z.string().min(1).default('ssh-privatekey').describe('Key of the private key in the Secret.'),
          })
          .optional()
          .describe(
            'A Secret holding the private key of that user. The inventory names it only to callers allowed to read it; the key itself is never copied.',
          ),
      })
      .optional()
      .describe('How Ansible reaches the nodes over SSH.'),
  })
  .describe('Inputs for the Ansible bootstrap that CAPO does not model. Additive: CAPO ignores them.');

export const machineSpecExtensions = z
  .object({
    networkInterfaces: z
      .object({
        keepalived: interfaceName.optional().describe('Interface keepalived announces virtual IPs on, for this machine (keepalived_interface).'),
      })
      .optional()
      .describe('Node network interfaces the bootstrap configures on this machine.'),
  })
  .describe('Inputs for the Ansible bootstrap of this machine that CAPO does not model.');

const loadBalancerStatus = z
  .object({
    vip: ipAddress.optional().describe('The virtual IP address of the load balancer.'),
    floatingIP: ipAddress.optional().describe('The floating IP associated with the virtual IP, if any.'),
    id: z.string().optional().describe('The Octavia load balancer ID.'),
  })
  .describe('A load balancer the reconciler manages.');

/**
 * IDs of OpenStack resources created for the object that CAPO's status has no
 * field for (listeners, pools, floating IPs, volumes, trunks, LB members),
 * keyed by their role, e.g. `listener/6443` or `volume/root`. Written right
 * after each create so that deletion removes exactly what was created.
 */
const ownedResources = z
  .record(z.string(), z.string())
  .optional()
  .describe('IDs of OpenStack resources created for this object that have no CAPO status field, by role (e.g. listener/6443, volume/root).');

const atomicStrings = z.array(z.string()).meta({ 'x-kubernetes-list-type': 'atomic' });

export const clusterStatusExtensions = z
  .object({
    ownedResources,
    availabilityZones: z
      .object({
        compute: atomicStrings.optional().describe('Nova availability zones (the failure domains are those available).'),
        volume: atomicStrings.optional().describe('Cinder availability zones, for topology-aware volumes (cinder-csi); absent without Cinder.'),
      })
      .optional()
      .describe('Availability zones of the cloud, read once when the cluster is first reconciled.'),
    adoption: z
      .object({
        adopt: atomicStrings.optional().describe('Resources CAPO created that adoption would take over: kind, name and ID.'),
        create: atomicStrings.optional().describe('Resources adoption would have to create: kind and name.'),
      })
      .optional()
      .describe('The dry run of adopting a CAPO cluster (annotation capo-apiserver.io/adopt: dry-run).'),
    networking: z
      .object({
        cilium: z
          .object({
            projectID: z.string().optional().describe('OpenStack project of the cluster network (cilium_openstack_project_id).'),
            defaultSubnetID: z.string().optional().describe('Subnet new pod interfaces attach to (cilium_openstack_default_subnet_id).'),
            securityGroupIDs: z
              .array(z.string())
              .meta({ 'x-kubernetes-list-type': 'atomic' })
              .optional()
              .describe('Security groups applied to pod interfaces (cilium_openstack_security_group_ids).'),
            webhookEnable: z.boolean().optional().describe('Whether the VPC CNI webhook is enabled (vpc_cni_webhook_enable).'),
          })
          .optional()
          .describe('Values the Cilium OpenStack integration needs.'),
      })
      .optional()
      .describe('Computed networking values.'),
    loadBalancers: z
      .object({
        controlPlane: loadBalancerStatus.optional().describe('The API server load balancer (master_virtual_vip).'),
        ingress: loadBalancerStatus.optional().describe('The ingress load balancer (ingress_virtual_vip, harbor_addr).'),
      })
      .optional()
      .describe('Computed load balancer addresses.'),
    openStack: z
      .object({
        mgmt: z.string().optional().describe('Address of the OpenStack management endpoint (cloud_master_vip).'),
        keystone: endpoint.optional().describe('Identity endpoint (openstack_auth_domain).'),
        nova: endpoint.optional().describe('Compute endpoint (openstack_nova_domain).'),
        neutron: endpoint.optional().describe('Network endpoint (openstack_neutron_domain).'),
        cinder: endpoint.optional().describe('Block storage endpoint (openstack_cinder_domain).'),
        project: z.string().optional().describe('Project name (openstack_project_name).'),
        projectDomain: z.string().optional().describe('Project domain name (openstack_project_domain_name).'),
        region: z.string().optional().describe('Region name (openstack_region_name).'),
      })
      .optional()
      .describe('Where the cluster lives in OpenStack. Credentials are never copied here; they stay in the identity Secret.'),
    platform: z
      .object({
        ntp: z
          .object({ server: z.string().optional().describe('The NTP server nodes use (ntp_server).') })
          .optional()
          .describe('Time synchronisation.'),
        management: z
          .object({ vip: ipAddress.optional().describe('Address of the bastion or management host (vip_mgmt).') })
          .optional()
          .describe('The management host.'),
      })
      .optional()
      .describe('Computed platform values.'),
  })
  .describe('Values the reconciler computed for the Ansible bootstrap.');

export const machineStatusExtensions = z
  .object({
    ownedResources,
    nodeResources: z
      .object({
        reserved: z
          .object({
            cpu: z.string().optional().describe('CPU reserved for the system and kubelet, as a Kubernetes quantity (e.g. 500m).'),
            memory: z.string().optional().describe('Memory reserved for the system and kubelet, as a Kubernetes quantity (e.g. 1Gi).'),
            ephemeralStorage: z.string().optional().describe('Ephemeral storage reserved, as a Kubernetes quantity.'),
          })
          .optional()
          .describe('Resources reserved on this node, computed from its flavor (node_resources).'),
        policy: z.string().optional().describe('The reservation policy that computed reserved, e.g. gke-tiered.'),
      })
      .optional()
      .describe('Resource reservations of this node.'),
  })
  .describe('Values the reconciler computed for the Ansible bootstrap of this machine.');

export const serverStatusExtensions = z.object({ ownedResources }).describe('OpenStack resources the reconciler created for this server beyond its ports.');
