/**
 * clusterctl (v1.12.5, built by ../shared/k8s/build.sh clusterctl) against a throwaway control
 * plane (./control-plane.ts), and what stands in there for the pods a control plane without a
 * kubelet cannot run: cert-manager issuing the providers' serving certificates and injecting its CA
 * into the APIServices, CRDs and webhook configurations that ask for it, Cluster API's managers as
 * host processes serving their webhooks behind the installed Services, and capo-apiserver's pod,
 * as this process serving behind the installed Service with the installed service account's
 * permissions; and a whole management cluster made of them (startManagementPlane).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { z } from 'zod';
import { aggregatedKinds } from '../src/served-kinds.js';
import { startApp, type RunningApp } from '../src/app.js';
import { builtBinary, type ClusterApiManager, type ControlPlane, controlPlaneUnavailable, startClusterApiManager, startControlPlane } from './control-plane.js';

const clusterctlBinary = builtBinary('clusterctl');

/** Why clusterctl cannot run against a control plane here, or undefined when it can. */
export function clusterctlUnavailable(): string | undefined {
  return (
    controlPlaneUnavailable() ??
    (existsSync(clusterctlBinary) ? undefined : `no clusterctl in ${path.dirname(clusterctlBinary)} (run ../shared/k8s/build.sh clusterctl)`)
  );
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** clusterctl with `args` and `env` (on top of this process's), given five minutes. */
export function clusterctl(args: string[], env: Record<string, string>): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(clusterctlBinary, args, { env: { ...process.env, ...env }, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

const certificate = z.object({
  metadata: z.object({ name: z.string(), namespace: z.string() }),
  spec: z.object({ secretName: z.string(), dnsNames: z.array(z.string()).min(1) }),
});
const injectable = z.object({
  items: z.array(z.looseObject({ metadata: z.object({ name: z.string(), annotations: z.record(z.string(), z.string()).optional() }) })),
});
const webhookConfiguration = z.object({ webhooks: z.array(z.unknown()).optional() });
const conversionCrd = z.object({ spec: z.object({ conversion: z.object({ strategy: z.string() }).optional() }) });

/**
 * What cert-manager does for the Certificates of `namespace`, with the cluster CA as their issuer:
 * each one's Secret (tls.crt, tls.key, ca.crt) for its DNS names, and its CA where the
 * `cert-manager.io/inject-ca-from` annotation names it (cert-manager's CA injector): the caBundle
 * of an APIService, of a CRD's conversion webhook, and of every webhook of a Validating or
 * MutatingWebhookConfiguration. Only cert-manager's CRDs are installed here, and no pod of
 * cert-manager can run.
 */
export async function standInForCertManager(plane: ControlPlane, namespace: string): Promise<void> {
  const certificates = z
    .object({ items: z.array(certificate) })
    .parse(JSON.parse(await kubectlOk(plane, ['get', 'certificates.cert-manager.io', '-n', namespace, '-o', 'json']))).items;
  const listed = async (resource: string) => injectable.parse(JSON.parse(await kubectlOk(plane, ['get', resource, '-o', 'json']))).items;
  const targets = {
    apiservices: await listed('apiservices'),
    crds: await listed('crds'),
    validatingwebhookconfigurations: await listed('validatingwebhookconfigurations'),
    mutatingwebhookconfigurations: await listed('mutatingwebhookconfigurations'),
  };
  const ca = Buffer.from(await readFile(plane.caCert)).toString('base64');
  for (const { metadata, spec } of certificates) {
    // A CN holds 64 characters at most (kubeadm's Service names are longer); the DNS names are in the SAN.
    const issued = await plane.certificate(
      `${namespace}-${metadata.name}`,
      `/CN=${spec.dnsNames[0]!.slice(0, 64)}`,
      `extendedKeyUsage=serverAuth\nsubjectAltName=${spec.dnsNames.map((name) => `DNS:${name}`).join(',')}`,
    );
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: { name: spec.secretName, namespace },
      data: { 'tls.crt': Buffer.from(issued.cert).toString('base64'), 'tls.key': Buffer.from(issued.key).toString('base64'), 'ca.crt': ca },
    };
    await kubectlOk(plane, ['apply', '-f', '-'], JSON.stringify(secret));
    const asking = (items: z.infer<typeof injectable>['items']) =>
      items.filter((item) => item.metadata.annotations?.['cert-manager.io/inject-ca-from'] === `${namespace}/${metadata.name}`);
    for (const service of asking(targets.apiservices)) {
      await kubectlOk(plane, ['patch', 'apiservice', service.metadata.name, '--type=merge', '-p', JSON.stringify({ spec: { caBundle: ca } })]);
    }
    for (const crd of asking(targets.crds)) {
      if (conversionCrd.parse(crd).spec.conversion?.strategy !== 'Webhook') continue;
      await kubectlOk(plane, [
        'patch',
        'crd',
        crd.metadata.name,
        '--type=json',
        '-p',
        JSON.stringify([{ op: 'add', path: '/spec/conversion/webhook/clientConfig/caBundle', value: ca }]),
      ]);
    }
    for (const kind of ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations'] as const) {
      for (const configuration of asking(targets[kind])) {
        const webhooks = webhookConfiguration.parse(configuration).webhooks ?? [];
        const patch = webhooks.map((_, index) => ({ op: 'add', path: `/webhooks/${index}/clientConfig/caBundle`, value: ca }));
        if (patch.length > 0) await kubectlOk(plane, ['patch', kind, configuration.metadata.name, '--type=json', '-p', JSON.stringify(patch)]);
      }
    }
  }
}

const tlsSecret = z.object({ data: z.object({ 'tls.crt': z.string(), 'tls.key': z.string() }) });

export interface InstalledServer {
  app: RunningApp;
  close(): Promise<void>;
}

/**
 * capo-apiserver as the installed Deployment runs it, in this process: aggregated, with the
 * installed service account's token (so with exactly the RBAC the release installed), the serving
 * certificate from the installed TLS Secret, and the reconciler; reached through the installed
 * Service by an EndpointSlice naming 127.0.0.1 (how ../shared/k8s routes to a loopback server).
 */
export async function serveAsInstalledPod(
  plane: ControlPlane,
  installed: { namespace: string; serviceAccount: string; service: string; servicePort: string; tlsSecret: string },
): Promise<InstalledServer> {
  const { namespace } = installed;
  const token = (await kubectlOk(plane, ['create', 'token', installed.serviceAccount, '-n', namespace, '--duration=2h'])).trim();
  const kubeconfig = path.join(plane.dir, `${installed.serviceAccount}.kubeconfig`);
  await writeFile(
    kubeconfig,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'management', cluster: { server: plane.url, 'certificate-authority': plane.caCert } }],
      users: [{ name: installed.serviceAccount, user: { token } }],
      contexts: [{ name: 'pod', context: { cluster: 'management', user: installed.serviceAccount } }],
      'current-context': 'pod',
    }),
  );
  const { data } = tlsSecret.parse(JSON.parse(await kubectlOk(plane, ['get', 'secret', installed.tlsSecret, '-n', namespace, '-o', 'json'])));
  const servingCertificate = { cert: Buffer.from(data['tls.crt'], 'base64').toString(), key: Buffer.from(data['tls.key'], 'base64').toString() };
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'capo-installed-'));
  const app = await startApp({ dataDir, host: '127.0.0.1', port: 0, kinds: aggregatedKinds, servingCertificate, aggregated: { kubeconfig }, reconciler: {} });
  await routeServiceToLoopback(plane, namespace, installed.service, installed.servicePort, Number(new URL(app.url).port));
  return {
    app,
    async close() {
      await app.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The installed Service `service` reaching a server on 127.0.0.1:`port`: an EndpointSlice of
 * addressType FQDN naming 127.0.0.1 (how ../shared/k8s routes to a loopback server), for the
 * Service's port named `portName`.
 */
async function routeServiceToLoopback(plane: ControlPlane, namespace: string, service: string, portName: string, port: number): Promise<void> {
  const endpoints = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    // Its own manager's label, so that kube-controller-manager's EndpointSlice controller leaves it be.
    metadata: {
      name: `${service}-loopback`,
      namespace,
      labels: { 'kubernetes.io/service-name': service, 'endpointslice.kubernetes.io/managed-by': 'capo-apiserver-tests' },
    },
    addressType: 'FQDN',
    endpoints: [{ addresses: ['127.0.0.1'] }],
    ports: [{ name: portName, port }],
  };
  await kubectlOk(plane, ['apply', '-f', '-'], JSON.stringify(endpoints));
}

/** What `clusterctl init` installs of Cluster API: each manager's namespace, webhook Service and the Secret cert-manager issues for it. */
const clusterApiProviders = [
  {
    manager: 'capi-manager',
    namespace: 'capi-system',
    service: 'capi-webhook-service',
    secret: 'capi-webhook-service-cert',
    featureGates: ['ClusterTopology=true'],
  },
  {
    manager: 'capi-kubeadm-bootstrap-manager',
    namespace: 'capi-kubeadm-bootstrap-system',
    service: 'capi-kubeadm-bootstrap-webhook-service',
    secret: 'capi-kubeadm-bootstrap-webhook-service-cert',
    featureGates: [],
  },
  {
    manager: 'capi-kubeadm-control-plane-manager',
    namespace: 'capi-kubeadm-control-plane-system',
    service: 'capi-kubeadm-control-plane-webhook-service',
    secret: 'capi-kubeadm-control-plane-webhook-service-cert',
    featureGates: ['ClusterTopology=true'],
  },
] as const;

const servicePorts = z.object({ spec: z.object({ ports: z.array(z.object({ name: z.string().optional() })).min(1) }) });

/**
 * Cluster API's managers as the pods `clusterctl init` installed would run them, as processes of
 * this host: each serves its webhooks (validating, defaulting, conversion) with the certificate of
 * the Secret cert-manager issued for its webhook Service (standInForCertManager first), and that
 * Service reaches it through a loopback EndpointSlice, so that kube-apiserver's calls to the
 * webhooks it was configured with succeed.
 */
export async function serveClusterApiAsInstalledPods(plane: ControlPlane): Promise<ClusterApiManager[]> {
  return Promise.all(
    clusterApiProviders.map(async ({ manager, namespace, service, secret, featureGates }) => {
      const { data } = tlsSecret.parse(JSON.parse(await kubectlOk(plane, ['get', 'secret', secret, '-n', namespace, '-o', 'json'])));
      const certificate = { cert: Buffer.from(data['tls.crt'], 'base64').toString(), key: Buffer.from(data['tls.key'], 'base64').toString() };
      const started = await startClusterApiManager(plane, manager, [...featureGates], [], certificate);
      const { spec } = servicePorts.parse(JSON.parse(await kubectlOk(plane, ['get', 'service', service, '-n', namespace, '-o', 'json'])));
      await routeServiceToLoopback(plane, namespace, service, spec.ports[0]!.name ?? '', started.webhookPort);
      return started;
    }),
  );
}

async function kubectlOk(plane: ControlPlane, args: string[], input?: string): Promise<string> {
  const result = await plane.kubectl(args, input);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

export interface ManagementPlane {
  plane: ControlPlane;
  /** clusterctl's environment for this plane: its kubeconfig, and a configuration home of its own. */
  env: Record<string, string>;
  installed: InstalledServer;
  managers: ClusterApiManager[];
  stop(): Promise<void>;
}

/**
 * A management cluster as `clusterctl init --infrastructure capo-apiserver` makes one, with the
 * pods it would run standing in as processes of this host: a control plane (with
 * kube-controller-manager) holding cert-manager's CRDs from `certManagerCrds`, the release of
 * `config` installed by the real clusterctl, every Certificate issued and its CA injected,
 * Cluster API's managers serving their webhooks behind their Services, and capo-apiserver behind
 * its APIServices, all Available.
 */
export async function startManagementPlane(options: { config: string; certManagerCrds: string }): Promise<ManagementPlane> {
  const plane = await startControlPlane({ controllerManager: true });
  const configHome = await mkdtemp(path.join(os.tmpdir(), 'capo-clusterctl-home-'));
  let managers: ClusterApiManager[] = [];
  let installed: InstalledServer | undefined;
  const stop = async () => {
    await installed?.close();
    await Promise.all(managers.map((manager) => manager.stop()));
    await plane.stop();
    await rm(configHome, { recursive: true, force: true });
  };
  try {
    // create: the CRDs are too large for apply's last-applied annotation.
    await kubectlOk(plane, ['create', '-f', options.certManagerCrds]);
    await kubectlOk(plane, ['wait', '--for=condition=Established', '-f', options.certManagerCrds, '--timeout=60s']);
    const env = { KUBECONFIG: plane.kubeconfig, XDG_CONFIG_HOME: configHome };
    const init = await clusterctl(['init', '--infrastructure', 'capo-apiserver', '--config', options.config], env);
    if (init.code !== 0) throw new Error(`clusterctl init: ${init.stdout}\n${init.stderr}`);
    for (const namespace of [...clusterApiProviders.map((provider) => provider.namespace), 'capo-system']) await standInForCertManager(plane, namespace);
    managers = await serveClusterApiAsInstalledPods(plane);
    installed = await serveAsInstalledPod(plane, {
      namespace: 'capo-system',
      serviceAccount: 'capo-apiserver',
      service: 'capo-apiserver',
      servicePort: 'https',
      tlsSecret: 'capo-apiserver-tls',
    });
    await kubectlOk(plane, [
      'wait',
      '--for=condition=Available',
      'apiservices',
      '-l',
      'cluster.x-k8s.io/provider=infrastructure-capo-apiserver',
      '--timeout=90s',
    ]);
    return { plane, env, installed, managers, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
