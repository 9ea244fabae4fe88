#!/usr/bin/env node
/**
 * `npm start`: the API server, on the embedded defaults (SQLite, local PKI, simulated cloud) or,
 * with --kubeconfig or in a pod, aggregated behind the management cluster's kube-apiserver.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { LeaderElectionOptions } from './app.js';
import type { ImageDownloadOptions } from './reconcile/image/downloads.js';
import type { EtcdStorageOptions } from './storage/etcd.js';
import { bytesOption, durationOption, ensurePortFree, integerOption, listOption, runServer, UsageError } from './cli/serve.js';

const usage = `Usage: npm start -- [options]

Serves the Cluster API Provider OpenStack kinds over HTTPS, storing objects in
SQLite under the data directory, where it also writes its CA, serving
certificate and a ready-to-use kubeconfig (KUBECONFIG=<data-dir>/kubeconfig),
and runs the reconciler that builds clusters in OpenStack. Without a
kube-apiserver, the Secrets, Clusters and Machines it reads are served here
too (kubectl apply -f examples/).

By default it also runs the embedded simulated OpenStack cloud on
--cloud-port and writes its clouds.yaml there (OS_CLIENT_CONFIG_FILE=
<data-dir>/clouds.yaml, cloud "simulator"); examples/ points at it.

With --kubeconfig, or when running in a pod, it serves aggregated behind the
management cluster's kube-apiserver (registered with APIServices): only the CAPO
and computed kinds, authentication and authorization delegated to the cluster
(front-proxy certificates, client certificates, TokenReview,
SubjectAccessReview), Secrets, Clusters and Machines read from the cluster, and
no simulated cloud unless --simulated-cloud.

Options:
  --data-dir DIR        where the database, PKI and kubeconfig live (default: ./data)
  --port, --secure-port PORT  HTTPS port (default: 6443; 0 picks a free port)
  --bind-address ADDR   address to listen on (default: 127.0.0.1)
  --tls-cert-file FILE, --tls-private-key-file FILE
                        serving certificate and key (default: the data directory's PKI)
  --cloud-port PORT     port of the simulated cloud (default: 6445; 0 picks a free port)
  --no-simulated-cloud  do not run the simulated cloud (use identity Secrets of real clouds)
  --simulated-cloud     run the simulated cloud in the aggregated mode too
  --simulated-zones A,B availability zones of the simulated cloud, one compute host each (default: nova)
  --orc-images served|external  ORC Images (openstack.k-orc.cloud) that image.imageRef names: served
                        here (default), or, in the aggregated mode with ORC installed in the
                        management cluster, ORC's own read from there
  --max-requests-inflight N           read-only requests served at once before 429 (default: 400)
  --max-mutating-requests-inflight N  writes served at once before 429 (default: 200); one user
                                      may hold a quarter of either at most
  --request-timeout DURATION          deadline of every request but watches, reading its body
                                      included, e.g. 60s, 1m30s (default: 1m0s)
  --dashboard-session-lifetime DURATION  a dashboard session ends this long after its sign-in, however
                                      often it is used (default: 12h0m0s; unused for 8 hours, sooner)

ORC Image downloads (the content of managed Images, from spec.resource.content.download.url):
  --image-download-allow LIST          destinations allowed although refused by default, comma-separated:
                                       a CIDR (10.0.0.0/8, fd00::/8) for any port, or ADDRESS:PORT
                                       (127.0.0.1:8080, [::1]:8080) for that port only. Refused by
                                       default: loopback, link-local, private (RFC 1918, ULA), CGNAT,
                                       multicast and reserved addresses and this host's own, checked on
                                       the address each connection (and each redirect's) is made to.
                                       The simulated cloud run here has its own mirror allowed
  --image-download-max-bytes SIZE      the largest download, and the largest image once decompressed,
                                       e.g. 512Mi, 16Gi (default: 16Gi; 1Gi with the simulated cloud,
                                       the most its Glance stores)
  --image-download-max-ratio N         the most a decompressor may make of one downloaded byte, judged
                                       past the first 64Mi (default: 100; a bomb of zeros is 1000 and more)
  --image-download-timeout DURATION    one attempt's deadline, download and upload (default: 30m0s);
                                       a missed one counts as a failed attempt (5 at most)
  --image-download-concurrency N       downloads at once (default: 6, at most the 10 Image workers less one)
  --image-download-concurrency-per-namespace N  of those, at most N for one namespace's Images (default: 3)

Storage (kube-apiserver's flag names):
  --storage sqlite|etcd  where objects live (default: sqlite, in --data-dir)
  --etcd-servers LIST    etcd client URLs, comma-separated (with --storage etcd)
  --etcd-prefix PREFIX   every key of this server lives under it (default: /capo-apiserver)
  --etcd-cafile FILE, --etcd-certfile FILE, --etcd-keyfile FILE
                         TLS to etcd: its CA, and this server's client certificate and key
  --watch-cache[=false]  serve watches and lists from memory, fed by one storage watch (default: true)

Leader election of the reconciler (kube controllers' flag names):
  --leader-elect[=false]               run the reconciler only while holding the leader lease
                                       (default: true with --storage etcd, false with sqlite)
  --leader-elect-lease-duration D      how long others wait for a silent leader (default: 12s, so a
                                       replica takes over within 15s of the leader's death)
  --leader-elect-renew-deadline D      how long the leader leads without renewing (default: 8s)
  --leader-elect-retry-period D        between renewals and attempts (default: 2s)
  --leader-elect-resource-name NAME    the lease (default: capo-apiserver)
  --leader-elect-resource-namespace NS where its Lease lives in the management cluster
                                       (default: the pod's namespace, else capo-system)
  --reconcile-shards N                 shard the reconciler by cluster across the replicas, one lease
                                       per shard, each cloud's limits split between them (default: 1,
                                       one leader; needs --leader-elect)

Aggregated mode (the flags of k8s.io/apiserver's delegated authentication and authorization):
  --kubeconfig FILE                   the management cluster (default in a pod: its service account)
  --authentication-kubeconfig FILE    where TokenReviews and the authentication ConfigMap are read (default: --kubeconfig)
  --authorization-kubeconfig FILE     where SubjectAccessReviews go (default: --kubeconfig)
  --authentication-skip-lookup        do not read kube-system/extension-apiserver-authentication; flags only
  --client-ca-file FILE               CA of client certificates that name users (default: from the ConfigMap)
  --requestheader-client-ca-file FILE CA of the front proxy's certificate (default: from the ConfigMap)
  --requestheader-allowed-names LIST  common names the front proxy may use, comma-separated (empty: any)
  --requestheader-username-headers LIST, --requestheader-uid-headers LIST,
  --requestheader-group-headers LIST, --requestheader-extra-headers-prefix LIST
                                      the front proxy's identity headers (default: from the ConfigMap,
                                      else X-Remote-User, X-Remote-Uid, X-Remote-Group, X-Remote-Extra-)
  --authorization-always-allow-paths LIST  paths allowed without a SubjectAccessReview
                                      (default: /healthz,/readyz,/livez)
  -v, --v N             log verbosity, as klog's: 0 info, 1-3 adds request and reconcile lines (debug),
                        4 and up everything (trace); logs are JSON lines on stderr (default: 0)
  -h, --help            print this help and exit

Boolean flags are pflag's: --flag alone is true, --flag=false turns it off.
`;

runServer({
  name: 'capo-apiserver',
  helpCommand: 'npm start -- --help',
  usage,
  options: {
    'data-dir': { type: 'string', default: './data' },
    port: { type: 'string', default: '6443' },
    'secure-port': { type: 'string' },
    'tls-cert-file': { type: 'string' },
    'tls-private-key-file': { type: 'string' },
    'simulated-cloud': { type: 'boolean', default: false },
    kubeconfig: { type: 'string' },
    'authentication-kubeconfig': { type: 'string' },
    'authorization-kubeconfig': { type: 'string' },
    'authentication-skip-lookup': { type: 'boolean', default: false },
    'client-ca-file': { type: 'string' },
    'requestheader-client-ca-file': { type: 'string' },
    'requestheader-allowed-names': { type: 'string' },
    'requestheader-username-headers': { type: 'string' },
    'requestheader-uid-headers': { type: 'string' },
    'requestheader-group-headers': { type: 'string' },
    'requestheader-extra-headers-prefix': { type: 'string' },
    'authorization-always-allow-paths': { type: 'string' },
    'bind-address': { type: 'string', default: '127.0.0.1' },
    'cloud-port': { type: 'string', default: '6445' },
    'no-simulated-cloud': { type: 'boolean', default: false },
    'simulated-zones': { type: 'string', default: 'nova' },
    'orc-images': { type: 'string', default: 'served' },
    'max-requests-inflight': { type: 'string', default: '400' },
    'max-mutating-requests-inflight': { type: 'string', default: '200' },
    'request-timeout': { type: 'string', default: '1m0s' },
    'dashboard-session-lifetime': { type: 'string', default: '12h0m0s' },
    'image-download-allow': { type: 'string' },
    'image-download-max-bytes': { type: 'string' },
    'image-download-max-ratio': { type: 'string', default: '100' },
    'image-download-timeout': { type: 'string', default: '30m0s' },
    'image-download-concurrency': { type: 'string', default: '6' },
    'image-download-concurrency-per-namespace': { type: 'string', default: '3' },
    v: { type: 'string', short: 'v', default: '0' },
    storage: { type: 'string', default: 'sqlite' },
    'leader-elect': { type: 'boolean' },
    'leader-elect-lease-duration': { type: 'string', default: '12s' },
    'leader-elect-renew-deadline': { type: 'string', default: '8s' },
    'leader-elect-retry-period': { type: 'string', default: '2s' },
    'leader-elect-resource-name': { type: 'string', default: 'capo-apiserver' },
    'leader-elect-resource-namespace': { type: 'string' },
    'reconcile-shards': { type: 'string', default: '1' },
    'etcd-servers': { type: 'string' },
    'etcd-prefix': { type: 'string' },
    'etcd-cafile': { type: 'string' },
    'etcd-certfile': { type: 'string' },
    'etcd-keyfile': { type: 'string' },
    'watch-cache': { type: 'boolean', default: true },
  },
  async start(values) {
    const port = values['secure-port'] !== undefined ? integerOption('secure-port', values['secure-port'], 65535) : integerOption('port', values.port, 65535);
    const dataDir = path.resolve(values['data-dir']);
    const cloudPort = integerOption('cloud-port', values['cloud-port'], 65535);
    // In a pod the management cluster is the one the pod runs in.
    const aggregated = values.kubeconfig !== undefined || process.env.KUBERNETES_SERVICE_HOST !== undefined;
    const simulatedCloud =
      values['no-simulated-cloud'] || (aggregated && !values['simulated-cloud'])
        ? false
        : { port: cloudPort, availabilityZones: listOption(values['simulated-zones']) };
    const orcImages = values['orc-images'];
    if (orcImages !== 'served' && orcImages !== 'external') throw new UsageError(`--orc-images must be served or external, not "${orcImages}"`);
    if (orcImages === 'external' && !aggregated)
      throw new UsageError("--orc-images=external reads ORC's Images from a management cluster: it needs --kubeconfig or a pod");
    const requestLimits = {
      maxInFlight: {
        readOnly: integerOption('max-requests-inflight', values['max-requests-inflight'], 100_000),
        mutating: integerOption('max-mutating-requests-inflight', values['max-mutating-requests-inflight'], 100_000),
      },
      requestTimeoutMs: durationOption('request-timeout', values['request-timeout']),
    };
    const dashboardSessions = { maxLifetimeMs: durationOption('dashboard-session-lifetime', values['dashboard-session-lifetime']) };
    // Every flag is judged before anything else happens.
    const imageDownloads = await imageDownloadOptions(values);
    const etcd = etcdOptions(values);
    const leaderElection = await leaderElectionOptions(values);
    const verbosity = integerOption('v', values.v, 10);
    const servingCert = await servingCertificate(values['tls-cert-file'], values['tls-private-key-file']);
    // A busy port is found before the data directory, PKI or database are made.
    await ensurePortFree(values['bind-address'], port);
    if (simulatedCloud) await ensurePortFree(values['bind-address'], cloudPort);
    // Loaded only now: --help and a usage error answer without loading the server (a second or more).
    const [{ startApp }, { aggregatedKinds, aggregatedKindsBesideOrc, servedKinds }, { createLogger }] = await Promise.all([
      import('./app.js'),
      import('./served-kinds.js'),
      import('./observability/log.js'),
    ]);
    const app = await startApp({
      dataDir,
      etcd,
      watchCache: values['watch-cache'],
      leaderElection,
      host: values['bind-address'],
      port,
      kinds: aggregated ? (orcImages === 'external' ? aggregatedKindsBesideOrc : aggregatedKinds) : servedKinds,
      simulatedCloud,
      reconciler: { imageDownloads },
      requestLimits,
      dashboardSessions,
      logger: createLogger({ verbosity }),
      servingCertificate: servingCert,
      aggregated: aggregated
        ? {
            kubeconfig: values.kubeconfig,
            authenticationKubeconfig: values['authentication-kubeconfig'],
            authorizationKubeconfig: values['authorization-kubeconfig'],
            skipLookup: values['authentication-skip-lookup'],
            clientCaFile: values['client-ca-file'],
            requestHeaderClientCaFile: values['requestheader-client-ca-file'],
            requestHeaderAllowedNames: listOption(values['requestheader-allowed-names']),
            requestHeaderUsernameHeaders: listOption(values['requestheader-username-headers']),
            requestHeaderUidHeaders: listOption(values['requestheader-uid-headers']),
            requestHeaderGroupHeaders: listOption(values['requestheader-group-headers']),
            requestHeaderExtraHeadersPrefix: listOption(values['requestheader-extra-headers-prefix']),
            alwaysAllowPaths: listOption(values['authorization-always-allow-paths']),
          }
        : undefined,
    });
    return {
      close: () => app.close(),
      announcement:
        `capo-apiserver serving on ${app.url}${aggregated ? ' (aggregated)' : ''}\n  data directory: ${dataDir}\n` +
        (app.kubeconfigPath ? `  kubeconfig:     ${app.kubeconfigPath}\n` : '') +
        '  reconciler:     running\n' +
        (app.cloud ? `  simulated cloud: ${app.cloud.url} (${app.cloudsYamlPath}; clouds: simulator, simulator-admin)\n` : ''),
    };
  },
});

/** The bounds of ORC Image downloads (reconcile/image/downloads.ts). */
async function imageDownloadOptions(values: {
  'image-download-allow'?: string;
  'image-download-max-bytes'?: string;
  'image-download-max-ratio': string;
  'image-download-timeout': string;
  'image-download-concurrency': string;
  'image-download-concurrency-per-namespace': string;
}): Promise<ImageDownloadOptions> {
  const allow = listOption(values['image-download-allow']) ?? [];
  const { checkAllowances } = await import('./reconcile/image/downloads.js');
  try {
    checkAllowances(allow);
  } catch (error) {
    throw new UsageError(`--image-download-allow: ${(error as Error).message}`);
  }
  const maxRatio = integerOption('image-download-max-ratio', values['image-download-max-ratio'], 1_000_000);
  const concurrency = integerOption('image-download-concurrency', values['image-download-concurrency'], 1000);
  const perNamespace = integerOption('image-download-concurrency-per-namespace', values['image-download-concurrency-per-namespace'], 1000);
  if (maxRatio < 1 || concurrency < 1 || perNamespace < 1)
    throw new UsageError('--image-download-max-ratio, --image-download-concurrency and --image-download-concurrency-per-namespace must be at least 1');
  return {
    allow,
    ...(values['image-download-max-bytes'] === undefined ? {} : { maxBytes: bytesOption('image-download-max-bytes', values['image-download-max-bytes']) }),
    maxRatio,
    timeoutMs: durationOption('image-download-timeout', values['image-download-timeout']),
    concurrency,
    perNamespace,
  };
}

/** Leader election as kube controllers configure it; undefined when off. */
async function leaderElectionOptions(values: {
  storage: string;
  'leader-elect'?: boolean;
  'leader-elect-lease-duration': string;
  'leader-elect-renew-deadline': string;
  'leader-elect-retry-period': string;
  'leader-elect-resource-name': string;
  'leader-elect-resource-namespace'?: string;
  'reconcile-shards': string;
}): Promise<LeaderElectionOptions | undefined> {
  const shards = integerOption('reconcile-shards', values['reconcile-shards'], 1024);
  if (shards < 1) throw new UsageError('--reconcile-shards must be at least 1');
  if (!(values['leader-elect'] ?? values.storage === 'etcd')) {
    if (shards > 1) throw new UsageError('--reconcile-shards needs --leader-elect: replicas share the shards through leases');
    return undefined;
  }
  const leaseDurationMs = durationOption('leader-elect-lease-duration', values['leader-elect-lease-duration']);
  const renewDeadlineMs = durationOption('leader-elect-renew-deadline', values['leader-elect-renew-deadline']);
  const retryPeriodMs = durationOption('leader-elect-retry-period', values['leader-elect-retry-period']);
  if (!(leaseDurationMs > renewDeadlineMs && renewDeadlineMs > retryPeriodMs)) {
    throw new UsageError('--leader-elect-lease-duration must exceed --leader-elect-renew-deadline, which must exceed --leader-elect-retry-period');
  }
  const name = values['leader-elect-resource-name'];
  const { dnsSubdomain } = await import('./reconcile/runtime/leader.js');
  if (!dnsSubdomain.test(name)) throw new UsageError(`--leader-elect-resource-name must be a DNS subdomain, not ${JSON.stringify(name)}`);
  const namespace = values['leader-elect-resource-namespace'] ?? (await podNamespace()) ?? 'capo-system';
  return { name, namespace, leaseDurationMs, renewDeadlineMs, retryPeriodMs, shards };
}

/** The namespace of the pod this runs in, from its service account, or undefined outside a pod. */
async function podNamespace(): Promise<string | undefined> {
  return (await readFile('/var/run/secrets/kubernetes.io/serviceaccount/namespace', 'utf8').catch(() => undefined))?.trim() || undefined;
}

/** The etcd backend's options when --storage etcd, checked as kube-apiserver checks them. */
function etcdOptions(values: {
  storage: string;
  'etcd-servers'?: string;
  'etcd-prefix'?: string;
  'etcd-cafile'?: string;
  'etcd-certfile'?: string;
  'etcd-keyfile'?: string;
}): EtcdStorageOptions | undefined {
  const etcdFlags = ['etcd-servers', 'etcd-prefix', 'etcd-cafile', 'etcd-certfile', 'etcd-keyfile'] as const;
  if (values.storage === 'sqlite') {
    const stray = etcdFlags.find((flag) => values[flag] !== undefined);
    if (stray) throw new UsageError(`--${stray} needs --storage etcd`);
    return undefined;
  }
  if (values.storage !== 'etcd') throw new UsageError(`--storage must be sqlite or etcd, not ${JSON.stringify(values.storage)}`);
  const servers = listOption(values['etcd-servers']) ?? [];
  if (servers.length === 0) throw new UsageError('--storage etcd needs --etcd-servers');
  for (const server of servers) {
    if (!URL.canParse(server) || !['http:', 'https:'].includes(new URL(server).protocol))
      throw new UsageError(`--etcd-servers: ${JSON.stringify(server)} is not an http(s) URL`);
  }
  if ((values['etcd-certfile'] === undefined) !== (values['etcd-keyfile'] === undefined))
    throw new UsageError('--etcd-certfile and --etcd-keyfile go together');
  const prefix = values['etcd-prefix'];
  if (prefix !== undefined && !prefix.startsWith('/')) throw new UsageError('--etcd-prefix must start with /');
  return { servers, prefix, caFile: values['etcd-cafile'], certFile: values['etcd-certfile'], keyFile: values['etcd-keyfile'] };
}

/** kube-apiserver's pair of flags: both or neither. */
async function servingCertificate(certFile: string | undefined, keyFile: string | undefined): Promise<{ cert: string; key: string } | undefined> {
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === undefined || keyFile === undefined) throw new UsageError('--tls-cert-file and --tls-private-key-file go together');
  return { cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8') };
}
