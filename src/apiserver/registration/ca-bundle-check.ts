/**
 * Whether kube-apiserver can talk to this server through its APIServices. Each APIService of a
 * group-version served here names our Service and, in spec.caBundle, the CA kube-apiserver's
 * aggregator trusts for it. With a caBundle that did not sign our serving certificate (a rotated
 * CA, another cluster's bundle, cert-manager's injection pointing elsewhere) kube-apiserver answers
 * every request for the group 503, while the APIService stays Available: its availability check does
 * not verify TLS. Only kube-apiserver's own log names the x509 error, so this server reads its
 * APIServices every `intervalMs` and says, in its log, which one is wrong and why, once per change.
 */
import { X509Certificate } from 'node:crypto';
import { ApiregistrationV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { z } from 'zod';
import { reviewTimeoutMs, withDeadline } from '../auth/delegated/deadline.js';

const apiServiceList = z.object({
  items: z.array(
    z.object({
      metadata: z.object({ name: z.string() }),
      spec: z.object({
        group: z.string().optional(),
        version: z.string().optional(),
        service: z.object({ name: z.string(), namespace: z.string() }).nullish(),
        caBundle: z.string().nullish(),
        insecureSkipTLSVerify: z.boolean().nullish(),
      }),
    }),
  ),
});

/** Why a caBundle (PEM) does not let a client verify the serving chain (PEM, leaf first), or undefined when it does. */
export function caBundleProblem(caBundlePem: string, servingChainPem: string): string | undefined {
  const chain = certificatesOf(servingChainPem);
  const leaf = chain[0];
  if (leaf === undefined) return 'the serving certificate holds no certificate';
  if (caBundlePem.trim() === '') return 'spec.caBundle is empty and insecureSkipTLSVerify is not set';
  const authorities = certificatesOf(caBundlePem);
  if (authorities.length === 0) return 'spec.caBundle holds no PEM certificate';
  // The bundle must hold the issuer of the leaf or of one of the intermediates sent with it.
  const verified = chain.some((certificate) => authorities.some((authority) => certificate.checkIssued(authority) && certificate.verify(authority.publicKey)));
  if (verified) return undefined;
  return `spec.caBundle (${authorities.map((authority) => authority.subject.replaceAll('\n', ', ')).join('; ')}) did not sign this server's certificate (${leaf.subject.replaceAll('\n', ', ')}, issued by ${leaf.issuer.replaceAll('\n', ', ')})`;
}

function certificatesOf(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const certificates: X509Certificate[] = [];
  for (const block of blocks) {
    try {
      certificates.push(new X509Certificate(block));
    } catch {
      // A block that does not parse verifies nothing; the others may still.
    }
  }
  return certificates;
}

export interface CaBundleCheckOptions {
  kubeconfig: KubeConfig;
  /** The serving certificate this server presents, PEM (its chain, leaf first). */
  servingCertificatePem: string;
  /** The group-versions this server serves: only their APIServices are ours to check. */
  groupVersions: { group: string; version: string }[];
  logger: Logger;
  intervalMs?: number;
}

/** Starts checking; the returned function stops it. */
export function startCaBundleCheck(options: CaBundleCheckOptions): () => void {
  const api = options.kubeconfig.makeApiClient(ApiregistrationV1Api);
  const served = new Set(options.groupVersions.map(({ group, version }) => `${version}.${group}`));
  const log = options.logger.child({ component: 'aggregation' });
  /** What was last said of each APIService, so a state is logged once, when it starts. */
  const said = new Map<string, string>();
  const check = async () => {
    let listed: z.infer<typeof apiServiceList>;
    try {
      listed = apiServiceList.parse(await withDeadline(api.listAPIService({}), reviewTimeoutMs, 'the APIService list'));
    } catch (error) {
      // Without the permission or the cluster, say so once; requests are unaffected by this check.
      const message = `cannot read APIServices to check their caBundle: ${error instanceof Error ? error.message : String(error)}`;
      if (said.get('') !== message) log.warn(message);
      said.set('', message);
      return;
    }
    said.delete('');
    for (const apiService of listed.items) {
      const name = apiService.metadata.name;
      if (!served.has(name) || !apiService.spec.service) continue;
      const problem = apiService.spec.insecureSkipTLSVerify
        ? undefined
        : caBundleProblem(Buffer.from(apiService.spec.caBundle ?? '', 'base64').toString(), options.servingCertificatePem);
      const state = problem ?? 'ok';
      if (said.get(name) === state) continue;
      if (problem)
        log.warn(
          { apiService: name },
          `APIService ${name}: ${problem}; kube-apiserver refuses every request for ${apiService.spec.version}.${apiService.spec.group} with 503 until its caBundle holds the CA that signed it`,
        );
      else if (said.has(name)) log.info({ apiService: name }, `APIService ${name}: its caBundle now verifies this server's certificate`);
      said.set(name, state);
    }
  };
  // One check at a time: a list that kube-apiserver is slow to answer never piles up behind the timer.
  let running = false;
  const checkOnce = async () => {
    if (running) return;
    running = true;
    try {
      await check();
    } finally {
      running = false;
    }
  };
  void checkOnce();
  const timer = setInterval(() => void checkOnce(), options.intervalMs ?? 30_000);
  timer.unref();
  return () => clearInterval(timer);
}
