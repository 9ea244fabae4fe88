/**
 * The benchmark's two views of the API server: a client that creates objects
 * over HTTPS as `kubectl apply` would (admin client certificate from the
 * generated kubeconfig), and a timeline of when each object's conditions
 * first became True, from a watch on the server's storage, so "Ready at"
 * is the commit time of the status write, not a polling interval later.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { KindDefinition } from '../../src/apiserver/registry/kind.js';
import type { JsonObject, Storage, Watch } from '../../src/storage/interface.js';
import type { KubeObject } from '../../harness/cluster-manifests.js';

const kubeconfigSchema = z.object({
  clusters: z.array(z.object({ cluster: z.object({ 'certificate-authority-data': z.string() }) })).min(1),
  users: z.array(z.object({ user: z.object({ 'client-certificate-data': z.string(), 'client-key-data': z.string() }) })).min(1),
});

class StaleConnectionError extends Error {
  override name = 'StaleConnectionError';
}

export class ApiClient {
  private readonly agent: https.Agent;
  private readonly base: URL;

  constructor(
    url: string,
    kubeconfigPath: string,
    private readonly kinds: KindDefinition[],
  ) {
    const config = kubeconfigSchema.parse(parseYaml(readFileSync(kubeconfigPath, 'utf8')));
    const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
    this.agent = new https.Agent({
      keepAlive: true,
      maxSockets: 16,
      ca: decode(config.clusters[0].cluster['certificate-authority-data']),
      cert: decode(config.users[0].user['client-certificate-data']),
      key: decode(config.users[0].user['client-key-data']),
    });
    this.base = new URL(url);
  }

  /** Deletes every object of a kind in a namespace (one DELETE on the collection); anything but 200 is an error. */
  async deleteAll(apiVersion: string, kind: string, namespace = 'default'): Promise<void> {
    const path = this.collectionPath({ apiVersion, kind, metadata: { name: '', namespace } });
    const { status, text } = await this.request('DELETE', path);
    if (status !== 200) throw new Error(`deleting every ${kind}: HTTP ${status}: ${text.slice(0, 500)}`);
  }

  /** POSTs the object to its collection; anything but 201 Created is an error. */
  async create(object: KubeObject): Promise<void> {
    const { status, text } = await this.request('POST', this.collectionPath(object), JSON.stringify(object));
    if (status !== 201) throw new Error(`creating ${object.kind} ${object.metadata.name}: HTTP ${status}: ${text.slice(0, 500)}`);
  }

  /** The server's Prometheus metrics: sample values of one family by label set, e.g. `{controller="openstackserver",result="success"}`. */
  async metric(family: string): Promise<Map<string, number>> {
    const { status, text } = await this.request('GET', '/metrics');
    if (status !== 200) throw new Error(`GET /metrics: HTTP ${status}: ${text.slice(0, 500)}`);
    const samples = new Map<string, number>();
    for (const line of text.split('\n')) {
      if (!line.startsWith(family)) continue;
      const match = /^(\S+?)(\{.*\})? (\S+)$/.exec(line);
      if (match?.[1] === family) samples.set(match[2] ?? '', Number(match[3]));
    }
    return samples;
  }

  /**
   * One request; sent again once when it went out on a kept-alive connection
   * the server had just closed for idleness (ECONNRESET on a reused socket,
   * as Node's documentation advises): the server never read it.
   */
  private async request(method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
    try {
      return await this.send(method, path, body);
    } catch (error) {
      if (!(error instanceof StaleConnectionError)) throw error;
      return this.send(method, path, body);
    }
  }

  private send(method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
    const headers: Record<string, string | number> =
      body === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) };
    return new Promise((resolve, reject) => {
      const req = https.request({ host: this.base.hostname, port: this.base.port, path, method, agent: this.agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', (error: NodeJS.ErrnoException) =>
        reject(req.reusedSocket && error.code === 'ECONNRESET' ? new StaleConnectionError(error.message) : error),
      );
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }

  private collectionPath(object: KubeObject): string {
    const slash = object.apiVersion.lastIndexOf('/');
    const group = slash < 0 ? '' : object.apiVersion.slice(0, slash);
    const version = object.apiVersion.slice(slash + 1);
    const kind = this.kinds.find((candidate) => candidate.group === group && candidate.kind === object.kind);
    if (!kind) throw new Error(`the server does not serve ${object.kind} in group "${group}"`);
    const root = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
    const namespace = kind.namespaced ? `/namespaces/${object.metadata.namespace ?? 'default'}` : '';
    return `${root}${namespace}/${kind.plural}`;
  }
}

const statusSchema = z.object({
  status: z.object({ conditions: z.array(z.object({ type: z.string(), status: z.string() })).optional() }).optional(),
});

/** Storage keys end in <namespace>/<name>; the prefix names the kind. */
export interface WatchedKind {
  kind: string;
  prefix: string;
}

export class ConditionTimeline {
  /** `${kind} ${namespace}/${name}` → condition type → when it first became True (performance.now()). */
  private readonly firstTrue = new Map<string, Map<string, number>>();
  /** `${kind} ${namespace}/${name}` → when it was deleted from storage (its finalizers all removed). */
  private readonly deleted = new Map<string, number>();
  private readonly watches: Watch[] = [];
  private readonly listeners = new Set<() => void>();
  /** Why the timeline stopped seeing changes; every wait fails with it. */
  private broken?: string;

  static async start(storage: Storage, kinds: WatchedKind[]): Promise<ConditionTimeline> {
    const timeline = new ConditionTimeline();
    const revision = await storage.currentRevision();
    for (const kind of kinds) {
      timeline.watches.push(
        storage.watch({
          prefix: kind.prefix,
          afterRevision: revision,
          onEvent: (event) => timeline.observe(kind, event.key, event.value, event.type === 'DELETED'),
          onError: (error) => {
            timeline.broken = `the benchmark's watch on ${kind.prefix} ended: ${error.message}`;
            timeline.notify();
          },
        }),
      );
    }
    return timeline;
  }

  /** When the object's condition first became True, or undefined. */
  trueAt(kind: string, namespace: string, name: string, type: string): number | undefined {
    return this.firstTrue.get(`${kind} ${namespace}/${name}`)?.get(type);
  }

  /** When the object was deleted, or undefined while it exists. */
  deletedAt(kind: string, namespace: string, name: string): number | undefined {
    return this.deleted.get(`${kind} ${namespace}/${name}`);
  }

  /** Every (object, condition) first-True time of one kind. */
  entries(kind: string): { name: string; type: string; atMs: number }[] {
    const out: { name: string; type: string; atMs: number }[] = [];
    for (const [object, types] of this.firstTrue) {
      if (!object.startsWith(`${kind} `)) continue;
      for (const [type, atMs] of types) out.push({ name: object.slice(kind.length + 1), type, atMs });
    }
    return out.sort((a, b) => a.atMs - b.atMs);
  }

  /** Resolves when `done()` holds after some event; rejects after timeoutMs with `describe()`. */
  waitUntil(done: () => boolean, timeoutMs: number, describe: () => string): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        const failed = this.broken;
        if (failed === undefined && !done()) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        if (failed === undefined) resolve();
        else reject(new Error(failed));
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`not converged after ${timeoutMs / 1000} s: ${describe()}`));
      }, timeoutMs);
      this.listeners.add(check);
    });
  }

  stop(): void {
    for (const watch of this.watches) watch.stop();
    this.listeners.clear();
  }

  private observe(kind: WatchedKind, key: string, value: JsonObject, deleted: boolean): void {
    const at = performance.now();
    const name = key.slice(kind.prefix.length);
    if (deleted) {
      this.deleted.set(`${kind.kind} ${name}`, at);
      this.notify();
      return;
    }
    const parsed = statusSchema.safeParse(value);
    const conditions = parsed.success ? (parsed.data.status?.conditions ?? []) : [];
    const object = `${kind.kind} ${name}`;
    let types = this.firstTrue.get(object);
    for (const condition of conditions) {
      if (condition.status !== 'True' || types?.has(condition.type)) continue;
      if (!types) {
        types = new Map();
        this.firstTrue.set(object, types);
      }
      types.set(condition.type, at);
    }
    this.notify();
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
