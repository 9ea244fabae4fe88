/**
 * A throwaway Kubernetes control plane (etcd + kube-apiserver, and kube-controller-manager when
 * asked; real binaries built by
 * ../shared/k8s/build.sh) on loopback ports of its own, through ../shared/k8s/up.sh, for the tests
 * that run this server aggregated behind it. Also what those tests need around it: kubectl with the
 * admin kubeconfig, certificates signed by the cluster's CAs, and registering a loopback server
 * behind APIServices.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pollUntil } from './poll.js';

const run = promisify(execFile);
/** ../shared beside the repository, found from the checkout's root whether this runs from its source or from dist/. */
export const sharedDirectory = path.join(repositoryRoot(path.dirname(fileURLToPath(import.meta.url))), '..', 'shared');
const upScript = path.join(sharedDirectory, 'k8s', 'up.sh');

export function repositoryRoot(from: string): string {
  return existsSync(path.join(from, 'package.json')) || path.dirname(from) === from ? from : repositoryRoot(path.dirname(from));
}
/** Where ../shared/k8s/build.sh puts what it builds. */
export const builtBinariesDirectory = path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'capo-k8s', 'bins');
const binaries = builtBinariesDirectory;

/** Where ../shared/k8s/build.sh puts the binary `name` (which may not have been built). */
export function builtBinary(name: string): string {
  return path.join(binaries, name);
}

/** Why the Cluster API manager cannot run here, or undefined when it can. */
export function clusterApiUnavailable(): string | undefined {
  const missing = clusterApiManagers.find((name) => !existsSync(path.join(binaries, name)));
  return controlPlaneUnavailable() ?? (missing === undefined ? undefined : `no ${missing} in ${binaries} (run ../shared/k8s/build.sh capi)`);
}

/** Why the CAPO manager cannot run here (with Cluster API's core manager beside it), or undefined when it can. */
export function capoUnavailable(): string | undefined {
  if (!existsSync(path.join(binaries, 'capo-manager'))) return `no capo-manager in ${binaries} (run ../shared/k8s/build.sh capo)`;
  return clusterApiUnavailable() ?? orcUnavailable();
}

/** Why ORC's CRDs cannot be installed here, or undefined when they can. */
export function orcUnavailable(): string | undefined {
  return (
    controlPlaneUnavailable() ??
    (existsSync(path.join(binaries, '..', 'orc-crds')) ? undefined : `no ORC CRDs in ${path.join(binaries, '..', 'orc-crds')} (run ../shared/k8s/build.sh orc)`)
  );
}

const clusterApiManagers = ['capi-manager', 'capi-kubeadm-bootstrap-manager', 'capi-kubeadm-control-plane-manager'] as const;

/** Why a control plane cannot start here, or undefined when it can. */
export function controlPlaneUnavailable(): string | undefined {
  if (!existsSync(upScript)) return `no ${upScript}`;
  if (!existsSync(path.join(binaries, 'kube-apiserver'))) return `no kube-apiserver in ${binaries} (run ../shared/k8s/build.sh k8s etcd)`;
  // up.sh falls back to Debian's etcd-server.
  if (!existsSync(path.join(binaries, 'etcd')) && !existsSync('/usr/bin/etcd')) return `no etcd in ${binaries} or /usr/bin (run ../shared/k8s/build.sh etcd)`;
  return undefined;
}

const kubeadmProviderCrds = [
  'kubeadmconfigs.bootstrap.cluster.x-k8s.io',
  'kubeadmconfigtemplates.bootstrap.cluster.x-k8s.io',
  'kubeadmcontrolplanes.controlplane.cluster.x-k8s.io',
  'kubeadmcontrolplanetemplates.controlplane.cluster.x-k8s.io',
];

export interface ControlPlane {
  dir: string;
  /** kube-apiserver's URL. */
  url: string;
  /** etcd's client URL (plain HTTP on loopback), for a server sharing kube-apiserver's etcd. */
  etcdServers: string[];
  /** The admin's client certificate and key (system:masters), PEM. */
  admin: { cert: string; key: string };
  /** The admin kubeconfig (system:masters). */
  kubeconfig: string;
  caCert: string;
  frontProxyCaCert: string;
  kubectl(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }>;
  /** A key and certificate signed by the cluster CA (`ca`) or the front-proxy CA, with the given subject and extensions. */
  certificate(name: string, subject: string, extensions: string, ca?: 'ca' | 'front-proxy-ca', days?: number): Promise<{ cert: string; key: string }>;
  /** Freezes kube-apiserver (SIGSTOP): connections are accepted and nothing answers, until `resume`. */
  freezeApiServer(): Promise<{ resume(): void }>;
  /** Kills kube-apiserver (SIGKILL; etcd keeps its data) until `start` runs it again with the same arguments and resolves once it is ready. */
  stopApiServer(): Promise<{ start(): Promise<void> }>;
  stop(): Promise<void>;
}

/**
 * kubectl as the given kubeconfig's user, answering its exit code and output. A `kubectl wait
 * --timeout=…` is given that long, and a minute more to answer; anything else a minute.
 */
export function kubectlWith(kubeconfig: string): ControlPlane['kubectl'] {
  return (args, input) =>
    new Promise((resolve) => {
      const waitSeconds = Number(args.find((arg) => arg.startsWith('--timeout='))?.match(/^--timeout=(\d+)s$/)?.[1] ?? 0);
      const child = execFile(
        'kubectl',
        ['--kubeconfig', kubeconfig, ...args],
        { timeout: 60_000 + waitSeconds * 1000, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) => {
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
        },
      );
      if (input !== undefined) child.stdin?.end(input);
    });
}

/**
 * `kubectl proxy` on a free loopback port, as the kubeconfig's user (or, with `as`, impersonating
 * another): what a person's browser reaches kube-apiserver's aggregated paths through.
 */
export async function kubectlProxy(kubeconfig: string, options: { as?: string } = {}): Promise<{ url: string; stop(): void }> {
  const impersonation = options.as === undefined ? [] : [`--as=${options.as}`];
  const proxy = spawn('kubectl', ['--kubeconfig', kubeconfig, ...impersonation, 'proxy', '--port=0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const port = await new Promise<string>((resolve, reject) => {
      let output = '';
      proxy.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const served = /Starting to serve on 127\.0\.0\.1:(\d+)/.exec(output);
        if (served) resolve(served[1]!);
      });
      proxy.once('exit', (code) => reject(new Error(`kubectl proxy exited ${code}: ${output}`)));
    });
    return { url: `http://127.0.0.1:${port}`, stop: () => proxy.kill() };
  } catch (error) {
    proxy.kill();
    throw error;
  }
}

/**
 * With `controllerManager`, kube-controller-manager runs too (namespace deletion, garbage
 * collection); `crds` names CRD sets of ../shared/k8s to apply (e.g. `capi`).
 */
export async function startControlPlane(options: { controllerManager?: boolean; crds?: string[] } = {}): Promise<ControlPlane> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'capo-k8s-'));
  const base = await freePortRun(4);
  const env = {
    ...process.env,
    K8S_DIR: dir,
    ETCD_PORT: String(base),
    APISERVER_PORT: String(base + 2),
    BINS: binaries,
    ...(options.controllerManager && { KCM: '1' }),
  };
  await run('bash', [upScript, 'start'], { env, timeout: 180_000 });
  const kubeconfig = path.join(dir, 'admin.kubeconfig');
  await installCrdSets(kubeconfig, options.crds ?? []);
  return controlPlaneAt({
    dir,
    url: `https://127.0.0.1:${base + 2}`,
    etcdServers: [`http://127.0.0.1:${base}`],
    kubeconfig,
    stop: async () => {
      await run('bash', [upScript, 'stop'], { env, timeout: 120_000 });
    },
  });
}

/** Applies CRD sets of ../shared/k8s (e.g. `capi`), labelled as clusterctl would, and waits until they are Established. */
export async function installCrdSets(kubeconfig: string, sets: string[]): Promise<void> {
  if (sets.length === 0) return;
  const kubectl = (args: string[]) => run('kubectl', ['--kubeconfig', kubeconfig, ...args], { maxBuffer: 16 * 1024 * 1024 });
  for (const set of sets) await kubectl(['apply', '--server-side', '-f', path.join(binaries, '..', `${set}-crds`)]);
  await kubectl(['wait', '--for', 'condition=Established', 'crd', '--all', '--timeout', '60s']);
  if (sets.includes('capi')) {
    // clusterctl labels the kubeadm providers' CRDs with the contract they implement; the CRDs as
    // built from Go modules carry no labels, and Cluster API resolves template versions by them.
    await kubectl(['label', '--overwrite', 'crd', ...kubeadmProviderCrds, 'cluster.x-k8s.io/v1beta2=v1beta2']);
  }
  if (sets.includes('capo')) {
    // CAPO's kustomization labels its CRDs with the contract they implement, v1beta1 at v1beta1.
    const { stdout } = await kubectl(['get', 'crd', '-o', 'name']);
    const capoCrds = stdout.split('\n').filter((name) => name.endsWith('.infrastructure.cluster.x-k8s.io'));
    await kubectl(['label', '--overwrite', ...capoCrds, 'cluster.x-k8s.io/v1beta1=v1beta1']);
  }
}

/**
 * The ControlPlane surface over a running etcd and kube-apiserver whose state is in `dir` (PKI in
 * dir/pki, the apiserver's PID in dir/kube-apiserver.pid, its log beside it), as up.sh and
 * harness/node/cluster.sh lay them out. `stop` stops the processes; the directory goes after it.
 */
export async function controlPlaneAt(options: {
  dir: string;
  url: string;
  etcdServers: string[];
  kubeconfig: string;
  stop: () => Promise<void>;
}): Promise<ControlPlane> {
  const { dir, kubeconfig } = options;
  const pki = path.join(dir, 'pki');
  const apiServerPid = async () => Number((await readFile(path.join(dir, 'kube-apiserver.pid'), 'utf8')).trim());
  return {
    dir,
    url: options.url,
    etcdServers: options.etcdServers,
    admin: { cert: await readFile(path.join(pki, 'admin.crt'), 'utf8'), key: await readFile(path.join(pki, 'admin.key'), 'utf8') },
    kubeconfig,
    caCert: path.join(pki, 'ca.crt'),
    frontProxyCaCert: path.join(pki, 'front-proxy-ca.crt'),
    kubectl: kubectlWith(kubeconfig),
    async certificate(name, subject, extensions, ca = 'ca', days = 30) {
      const key = path.join(pki, `${name}.key`);
      const csr = path.join(pki, `${name}.csr`);
      const cert = path.join(pki, `${name}.crt`);
      const extfile = path.join(pki, `${name}.ext`);
      await writeFile(extfile, `keyUsage=critical,digitalSignature,keyEncipherment\n${extensions}\n`);
      await run('openssl', ['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-subj', subject, '-out', csr]);
      // A random serial per certificate: -CAcreateserial shares one serial file, which certificates signed in parallel corrupt.
      const serial = `0x${randomBytes(16).toString('hex')}`;
      await run('openssl', [
        'x509',
        '-req',
        '-in',
        csr,
        '-CA',
        path.join(pki, `${ca}.crt`),
        '-CAkey',
        path.join(pki, `${ca}.key`),
        '-set_serial',
        serial,
        '-days',
        String(days),
        '-extfile',
        extfile,
        '-out',
        cert,
      ]);
      return { cert: await readFile(cert, 'utf8'), key: await readFile(key, 'utf8') };
    },
    async freezeApiServer() {
      const pid = await apiServerPid();
      process.kill(pid, 'SIGSTOP');
      return { resume: () => process.kill(pid, 'SIGCONT') };
    },
    async stopApiServer() {
      const pid = await apiServerPid();
      const [binary, ...args] = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter(Boolean);
      // As a crash takes it: a graceful stop may wait long on its in-flight requests.
      process.kill(pid, 'SIGKILL');
      await pollUntil('kube-apiserver to exit', async () => (processGone(pid) ? true : undefined), { timeoutMs: 30_000, intervalMs: 100 });
      return {
        async start() {
          const log = await open(path.join(dir, 'kube-apiserver.log'), 'a');
          const child = spawn(binary, args, { detached: true, stdio: ['ignore', log.fd, log.fd] });
          child.unref();
          await log.close();
          // up.sh stop finds it by this file, as it finds what it started.
          await writeFile(path.join(dir, 'kube-apiserver.pid'), `${child.pid}\n`);
          await pollUntil(
            'kube-apiserver to be ready again',
            async () =>
              (await run('kubectl', ['--kubeconfig', kubeconfig, 'get', '--raw', '/readyz']).then(
                () => true,
                () => false,
              ))
                ? true
                : undefined,
            {
              timeoutMs: 120_000,
              intervalMs: 250,
            },
          );
        },
      };
    },
    async stop() {
      await options.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Registers a server listening on 127.0.0.1:`port` behind kube-apiserver for each group-version:
 * a Service without a selector, an FQDN EndpointSlice naming 127.0.0.1 (kube refuses loopback
 * addresses in the other kinds), and one APIService per group-version trusting `caBundle`.
 * Resolves once every APIService is Available and kube-apiserver publishes its OpenAPI v3.
 */
export async function registerAggregatedServer(
  plane: ControlPlane,
  options: { namespace: string; service: string; port: number; caBundlePem: string; groupVersions: { group: string; version: string }[] },
): Promise<void> {
  const { namespace, service, port } = options;
  const documents = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: service, namespace }, spec: { ports: [{ name: 'https', port: 443 }] } },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: service, namespace, labels: { 'kubernetes.io/service-name': service } },
      addressType: 'FQDN',
      endpoints: [{ addresses: ['127.0.0.1'] }],
      ports: [{ name: 'https', port }],
    },
    ...options.groupVersions.map(({ group, version }, index) => ({
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: `${version}.${group}` },
      spec: {
        group,
        version,
        groupPriorityMinimum: 1000,
        // Listed newest first: the first is the group's preferred version.
        versionPriority: 100 - index,
        caBundle: Buffer.from(options.caBundlePem).toString('base64'),
        service: { namespace, name: service, port: 443 },
      },
    })),
  ];
  const applied = await plane.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: documents }));
  if (applied.code !== 0) throw new Error(`registering the APIServices: ${applied.stderr}`);
  const names = options.groupVersions.map(({ group, version }) => `apiservice/${version}.${group}`);
  const available = await plane.kubectl(['wait', '--for=condition=Available', '--timeout=90s', ...names]);
  if (available.code !== 0) {
    const status = await plane.kubectl(['get', 'apiservices', ...names.map((name) => name.split('/')[1]), '-o', 'yaml']);
    throw new Error(`the APIServices did not become Available: ${available.stderr}\n${status.stdout}`);
  }
  // Available is not yet published: kube-apiserver's OpenAPI aggregator fetches our /openapi/v3 on its
  // own after that (about 2 s on two cores), and until then /openapi/v3/apis/<group>/<version> is a 404.
  const expected = options.groupVersions.map(({ group, version }) => `apis/${group}/${version}`);
  await pollUntil(
    `kube-apiserver to publish the OpenAPI v3 of ${expected.join(', ')}`,
    async () => {
      const root = await plane.kubectl(['get', '--raw', '/openapi/v3']);
      if (root.code !== 0) return undefined;
      const paths = (JSON.parse(root.stdout) as { paths?: Record<string, unknown> }).paths ?? {};
      return expected.every((entry) => entry in paths) ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
}

/** Exited: no such process, or a zombie no one reaps (a container's init may not). */
function processGone(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? true;
  } catch {
    return true;
  }
}

/** Port runs already handed out in this process. */
const handedOut = new Set<number>();

/**
 * The first of `count` consecutive free loopback ports (up.sh puts etcd's peer port beside its
 * client port, kube-controller-manager beside kube-apiserver). They are taken below Linux's
 * ephemeral range (32768 and up), where outgoing connections would otherwise grab one between this
 * check and the binaries' bind; the starting point follows the process id, so parallel runs differ.
 */
export async function freePortRun(count: number): Promise<number> {
  const slots = 3000;
  for (let attempt = 0; attempt < 50; attempt++) {
    const first = 20_000 + ((process.pid + attempt * 7919) % slots) * count;
    const ports = Array.from({ length: count }, (_, i) => first + i);
    // Runs handed out earlier may not be bound yet: never hand them out twice.
    if (ports.some((port) => handedOut.has(port))) continue;
    for (const port of ports) handedOut.add(port);
    if ((await Promise.all(ports.map(isFree))).every(Boolean)) return first;
  }
  throw new Error(`no run of ${count} free ports on 127.0.0.1 between 20000 and 32000`);
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export interface ClusterApiManager {
  /** The loopback port its webhook server listens on. */
  webhookPort: number;
  /** Its log, for a failure message. */
  log(): Promise<string>;
  stop(): Promise<void>;
}

/** The managers ../shared/k8s/build.sh builds: Cluster API's core one, kubeadm's bootstrap and control-plane providers, and CAPO's. */
export type ClusterApiManagerName = (typeof clusterApiManagers)[number] | 'capo-manager';

/**
 * One real Cluster API manager against the control plane, unchanged, on ports of its own (webhook,
 * health, diagnostics), with a certificate for its webhook server; resolves once it reports
 * healthy. `featureGates` are passed as the manager takes them (e.g. `ClusterTopology=true`), then `args`.
 * `webhookCertificate` is the one its webhook server serves (as the pod mounts it from the
 * Secret cert-manager issued for its webhook Service); by default one for localhost.
 */
export async function startClusterApiManager(
  plane: ControlPlane,
  name: ClusterApiManagerName = 'capi-manager',
  featureGates: string[] = [],
  args: string[] = [],
  webhookCertificate?: { cert: string; key: string },
): Promise<ClusterApiManager> {
  const certDir = path.join(plane.dir, `${name}-webhook`);
  await mkdir(certDir, { recursive: true });
  const webhook =
    webhookCertificate ??
    (await plane.certificate(`${name}-webhook`, `/CN=${name}-webhook`, 'extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1'));
  await writeFile(path.join(certDir, 'tls.crt'), webhook.cert);
  await writeFile(path.join(certDir, 'tls.key'), webhook.key);
  const base = await freePortRun(3);
  const logFile = path.join(plane.dir, `${name}.log`);
  const output = await open(logFile, 'w');
  const child = spawn(
    path.join(binaries, name),
    [
      `--kubeconfig=${plane.kubeconfig}`,
      '--leader-elect=false',
      `--webhook-cert-dir=${certDir}`,
      `--webhook-port=${base}`,
      `--health-addr=127.0.0.1:${base + 1}`,
      `--diagnostics-address=127.0.0.1:${base + 2}`,
      '--insecure-diagnostics',
      ...(featureGates.length > 0 ? [`--feature-gates=${featureGates.join(',')}`] : []),
      ...args,
    ],
    { stdio: ['ignore', output.fd, output.fd] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await pollUntil(
      `${name} to report healthy`,
      async () => {
        if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
        return (await fetch(`http://127.0.0.1:${base + 1}/readyz`).then(
          (response) => response.ok,
          () => false,
        ))
          ? true
          : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${name} did not become ready (${String(error)}):\n${(await readFile(logFile, 'utf8')).slice(-3000)}`);
  }
  return {
    webhookPort: base,
    log: () => readFile(logFile, 'utf8'),
    async stop() {
      child.kill('SIGTERM');
      await exited;
      await output.close();
    },
  };
}
