/**
 * WatchedCollection against a real kube-apiserver, reached through a proxy that can go silent as a
 * broken network path does (StallingProxy): the server ends each watch at the timeout the watch
 * asked for and the collection watches again at once from where it was; a watch that stops
 * receiving is given up after its stall bound, logged and counted, and once the path heals what
 * changed meanwhile is seen; a list that is never answered fails at the request deadline.
 */
import { CoreV1Api, KubeConfig, type KubernetesObject, type V1Secret } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { controlPlaneUnavailable, startControlPlane, type ControlPlane } from '../../../harness/control-plane.js';
import { pollUntil } from '../../../harness/poll.js';
import { createLogger } from '../../../src/observability/log.js';
import { MetricsRegistry } from '../../../src/observability/metrics.js';
import { loadKubeconfig } from '../../../src/reconcile/sources/kubeconfig.js';
import { WatchedCollection } from '../../../src/reconcile/sources/watched-collection.js';
import { StallingProxy } from './stalling-proxy.js';

const unavailable = controlPlaneUnavailable();
/**
 * Short bounds, so that a test takes seconds: each watch asks for timeoutSeconds=1, so kube-apiserver
 * ends it after a second, and has stalled when it receives nothing for that and the request deadline.
 */
const minWatchTimeoutMs = 1000;
const requestTimeoutMs = 1000;
const stallMs = 2000;

let plane: ControlPlane;
/** Straight to kube-apiserver, never through the proxy: what the rest of the world does meanwhile. */
let core: CoreV1Api;
let namespaceCount = 0;

let proxy: StallingProxy;
let collection: WatchedCollection | undefined;
let metrics: MetricsRegistry;
let warnings: Record<string, unknown>[];
let errors: unknown[];
let changed: string[];

describe.skipIf(unavailable !== undefined)(
  unavailable === undefined ? 'WatchedCollection against kube-apiserver' : `WatchedCollection against kube-apiserver (skipped: ${unavailable})`,
  () => {
    beforeAll(async () => {
      plane = await startControlPlane();
      core = loadKubeconfig(plane.kubeconfig).makeApiClient(CoreV1Api);
    }, 300_000);

    afterAll(async () => {
      await plane?.stop();
    }, 120_000);

    beforeEach(async () => {
      proxy = await StallingProxy.start({ host: '127.0.0.1', port: Number(new URL(plane.url).port) });
      metrics = new MetricsRegistry({ processMetrics: false });
      warnings = [];
      errors = [];
      changed = [];
    });

    afterEach(async () => {
      collection?.stop();
      collection = undefined;
      await proxy.close();
    });

    /** The Secrets of a new namespace, watched through the proxy. */
    async function watchSecrets(): Promise<{ namespace: string; collection: WatchedCollection }> {
      const namespace = `watch-${process.pid}-${++namespaceCount}`;
      await core.createNamespace({ body: { metadata: { name: namespace } } });
      const config = throughProxy();
      const proxied = config.makeApiClient(CoreV1Api);
      collection = new WatchedCollection({
        path: `/api/v1/namespaces/${namespace}/secrets`,
        config,
        list: () => proxied.listNamespacedSecret({ namespace }),
        onChange: (object: KubernetesObject) => changed.push(object.metadata?.name ?? ''),
        onError: (error) => errors.push(error),
        retry: { baseMs: 50, maxMs: 500 },
        requestTimeoutMs,
        logger: createLogger({ level: 'warn', destination: { write: (line: string) => void warnings.push(JSON.parse(line)) } }),
        metrics,
        minWatchTimeoutMs,
      });
      return { namespace, collection };
    }

    /** The admin kubeconfig, with the proxy for server (kube-apiserver's certificate names 127.0.0.1, whatever the port). */
    function throughProxy(): KubeConfig {
      const admin = loadKubeconfig(plane.kubeconfig);
      const config = new KubeConfig();
      config.loadFromOptions({
        clusters: admin.clusters.map((cluster) => ({ ...cluster, server: `https://127.0.0.1:${proxy.port}` })),
        users: admin.users,
        contexts: admin.contexts,
        currentContext: admin.currentContext,
      });
      return config;
    }

    /** Resolves once the cache answers: it has listed and its watch is open. */
    function current(collection: WatchedCollection, namespace: string): Promise<true> {
      return pollUntil('the cache to be current', async () => (collection.lookup(namespace, 'any') ? true : undefined), { timeoutMs: 15_000 });
    }

    const secret = (name: string): V1Secret => ({ metadata: { name }, stringData: { key: name } });
    const stalls = async () => (await metrics.totalsBy('management_cluster_watch_stalls_total', 'resource')).secrets ?? 0;

    it('gives up a watch that receives nothing for the stall bound, and sees what changed meanwhile once the path heals', async () => {
      const { namespace } = await watchSecrets();
      await current(collection!, namespace);
      // The watch has just been answered: its silence starts about now.
      proxy.stall();
      const stalledAt = Date.now();
      await core.createNamespacedSecret({ namespace, body: secret('meanwhile') });

      await pollUntil('the stall to be counted', async () => ((await stalls()) > 0 ? true : undefined), { timeoutMs: stallMs + 5000 });
      // The stall bound after the last byte, which came just before the stall: neither the request deadline nor anything later.
      expect(Date.now() - stalledAt).toBeGreaterThan(stallMs - 500);
      expect(Date.now() - stalledAt).toBeLessThan(stallMs + 1000);
      expect(await stalls()).toBe(1);
      const path = `/api/v1/namespaces/${namespace}/secrets`;
      expect(warnings).toEqual([
        expect.objectContaining({
          level: 40,
          resource: 'secrets',
          path,
          silenceMs: stallMs,
          msg: `watching ${path}: no event or bookmark for 2 s; watching again`,
        }),
      ]);
      // Not current any more: reads go to kube-apiserver, and readiness says why.
      expect(collection!.lookup(namespace, 'meanwhile')).toBeUndefined();
      expect(collection!.problem()).toBe(`watching ${path}: no event or bookmark for 2 s`);
      expect(changed).not.toContain('meanwhile');

      proxy.heal();
      await pollUntil('the Secret created while stalled to be seen', async () => (changed.includes('meanwhile') ? true : undefined), { timeoutMs: 15_000 });
      expect(collection!.lookup(namespace, 'meanwhile')?.object?.metadata?.name).toBe('meanwhile');
      expect(collection!.problem()).toBeUndefined();
      // Watching again while the path was dead: each attempt failed at the request deadline.
      for (const error of errors) expect(String(error)).toMatch(/the watch request did not answer within 1 s$/);
    });

    it('fails a list that is never answered at the request deadline, and lists again once the path heals', async () => {
      proxy.stall();
      const { namespace } = await watchSecrets();
      await core.createNamespacedSecret({ namespace, body: secret('listed') });
      await pollUntil('the list to fail', async () => (errors.length > 0 ? true : undefined), { timeoutMs: requestTimeoutMs + 2000 });
      const path = `/api/v1/namespaces/${namespace}/secrets`;
      expect(String(errors[0])).toBe(`Error: watching ${path}: the list did not answer within 1 s`);
      expect(collection!.problem()).toMatch(/did not answer within 1 s$/);

      proxy.heal();
      await current(collection!, namespace);
      expect(collection!.lookup(namespace, 'listed')?.object?.metadata?.name).toBe('listed');
      expect(changed).toContain('listed');
      expect(await stalls()).toBe(0);
    });

    it('is ended by kube-apiserver at the timeout it asked for, and watches again at once from where it was, without relisting', async () => {
      const { namespace } = await watchSecrets();
      await current(collection!, namespace);
      const before = await requestCounts();
      // Reopened at once, four watches of a second each take about four; with ListWatch's waits after a watch the server ended (1, 2, 4 s) eleven.
      await pollUntil('kube-apiserver to end four watches', async () => ((await requestCounts()).watches >= before.watches + 4 ? true : undefined), {
        timeoutMs: 8000,
        intervalMs: 250,
      });
      await core.createNamespacedSecret({ namespace, body: secret('later') });
      await pollUntil('the Secret created later to be seen', async () => (changed.includes('later') ? true : undefined), { timeoutMs: 3000 });
      expect((await requestCounts()).lists).toBe(before.lists);
      expect(errors).toEqual([]);
      expect(await stalls()).toBe(0);
    });
  },
);

/**
 * The namespaced lists and watches of Secrets kube-apiserver has finished (apiserver_request_total):
 * the running test's own, as kube-apiserver's informers watch cluster-wide.
 */
async function requestCounts(): Promise<{ lists: number; watches: number }> {
  const { stdout, code, stderr } = await plane.kubectl(['get', '--raw', '/metrics']);
  if (code !== 0) throw new Error(`reading kube-apiserver's metrics: ${stderr}`);
  const count = (verb: string) =>
    stdout
      .split('\n')
      .filter((line) => line.startsWith('apiserver_request_total{') && line.includes(`resource="secrets"`) && line.includes('scope="namespace"'))
      .filter((line) => line.includes(`verb="${verb}"`))
      .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
  return { lists: count('LIST'), watches: count('WATCH') };
}
