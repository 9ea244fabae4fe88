/**
 * A CAPO user's clusterctl environment: the variables CAPO's templates name (as CAPO's
 * templates/env.rc and its book set them), for a cloud `openstack` whose Keystone is a loopback
 * port nothing listens on, so a reconciler that reads it fails at once instead of reaching out.
 */
const cloudsYaml = `clouds:
  openstack:
    auth:
      auth_url: http://127.0.0.1:9/identity/v3
      application_credential_id: 0f8d3d8fe7c64b8b8ac4b2d6e3d8f2a1
      application_credential_secret: not-a-secret
    region_name: RegionOne
    interface: public
    identity_api_version: 3
    auth_type: v3applicationcredential
`;

export const capoEnvironment: Record<string, string> = {
  OPENSTACK_CLOUD: 'openstack',
  OPENSTACK_CLOUD_YAML_B64: Buffer.from(cloudsYaml).toString('base64'),
  OPENSTACK_CLOUD_CACERT_B64: Buffer.from('\n').toString('base64'),
  OPENSTACK_CONTROL_PLANE_MACHINE_FLAVOR: 'm1.medium',
  OPENSTACK_NODE_MACHINE_FLAVOR: 'm1.small',
  OPENSTACK_EXTERNAL_NETWORK_ID: '5b5ac5b4-5ff1-4b0e-9a2c-8b2f3e1d7a10',
  OPENSTACK_IMAGE_NAME: 'ubuntu-2404-kube-v1.34.4',
  OPENSTACK_SSH_KEY_NAME: 'default',
  OPENSTACK_FAILURE_DOMAIN: 'nova',
  OPENSTACK_DNS_NAMESERVERS: '192.0.2.53',
};

/** What clusterctl's flags set (`--kubernetes-version`, `--control-plane-machine-count`, `--worker-machine-count`), for rendering without clusterctl. */
export const clusterctlFlagVariables: Record<string, string> = { KUBERNETES_VERSION: 'v1.34.4', CONTROL_PLANE_MACHINE_COUNT: '3', WORKER_MACHINE_COUNT: '2' };
