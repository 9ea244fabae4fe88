/**
 * clusterctl (v1.12.5, built by ../shared/k8s/build.sh clusterctl) against a throwaway control
 * plane (./control-plane.ts), and what stands in there for the pods a control plane without a
 * kubelet cannot run: cert-manager issuing a provider's serving certificate and injecting its CA
 * into the APIServices that ask for it, and capo-apiserver's pod, as this process serving behind
 * the installed Service with the installed service account's permissions.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { z } from 'zod';
import { aggregatedKinds } from '../src/api/kinds.js';
import { startApp, type RunningApp } from '../src/app.js';
import { builtBinary, type ControlPlane, controlPlaneUnavailable } from './control-plane.js';

const clusterctlBinary = builtBinary('clusterctl');

/** Why clusterctl cannot run against a control plane here, or undefined when it can. */
export function clusterctlUnavailable(): string | undefined {
  return controlPlaneUnavailable() ?? (existsSync(clusterctlBinary) ? undefined : `no clusterctl in ${path.dirname(clusterctlBinary)} (run ../shared/k8s/build.sh clusterctl)`);
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
const apiServices = z.object({ items: z.array(z.object({ metadata: z.object({ name: z.string(), annotations: z.record(z.string(), z.string()).optional() }) })) });

/**
 * What cert-manager does for the Certificates of `namespace`, with the cluster CA as their issuer:
 * each one's Secret (tls.crt, tls.key, ca.crt) for its DNS names, and its CA in the caBundle of
 * every APIService whose `cert-manager.io/inject-ca-from` annotation names it (cert-manager's CA
 * injector). Only cert-manager's CRDs are installed here, and no pod of cert-manager can run.
 */
export async function standInForCertManager(plane: ControlPlane, namespace: string): Promise<void> {
  const certificates = z.object({ items: z.array(certificate) }).parse(JSON.parse(await kubectlOk(plane, ['get', 'certificates.cert-manager.io', '-n', namespace, '-o', 'json']))).items;
  const services = apiServices.parse(JSON.parse(await kubectlOk(plane, ['get', 'apiservices', '-o', 'json']))).items;
  const ca = Buffer.from(await readFile(plane.caCert)).toString('base64');
  for (const { metadata, spec } of certificates) {
    const issued = await plane.certificate(`${namespace}-${metadata.name}`, `/CN=${spec.dnsNames[0]}`, `extendedKeyUsage=serverAuth\nsubjectAltName=${spec.dnsNames.map((name) => `DNS:${name}`).join(',')}`);
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: { name: spec.secretName, namespace },
      data: { 'tls.crt': Buffer.from(issued.cert).toString('base64'), 'tls.key': Buffer.from(issued.key).toString('base64'), 'ca.crt': ca },
    };
    await kubectlOk(plane, ['apply', '-f', '-'], JSON.stringify(secret));
    for (const service of services) {
      if (service.metadata.annotations?.['cert-manager.io/inject-ca-from'] !== `${namespace}/${metadata.name}`) continue;
      await kubectlOk(plane, ['patch', 'apiservice', service.metadata.name, '--type=merge', '-p', JSON.stringify({ spec: { caBundle: ca } })]);
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
  const endpoints = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    // Its own manager's label, so that kube-controller-manager's EndpointSlice controller leaves it be.
    metadata: { name: `${installed.service}-loopback`, namespace, labels: { 'kubernetes.io/service-name': installed.service, 'endpointslice.kubernetes.io/managed-by': 'capo-apiserver-tests' } },
    addressType: 'FQDN',
    endpoints: [{ addresses: ['127.0.0.1'] }],
    ports: [{ name: installed.servicePort, port: Number(new URL(app.url).port) }],
  };
  await kubectlOk(plane, ['apply', '-f', '-'], JSON.stringify(endpoints));
  return {
    app,
    async close() {
      await app.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function kubectlOk(plane: ControlPlane, args: string[], input?: string): Promise<string> {
  const result = await plane.kubectl(args, input);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}
