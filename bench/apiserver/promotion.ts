/**
 * What a request leaves to V8's old generation. An object that outlives two young-generation
 * collections is moved to the old generation, and only a full collection frees it; a server whose
 * requests leave garbage there runs full collections often, and one landing among watch events is
 * what decides the watch tail (BENCHMARKS.md). This probe runs the bench server (server.ts) under
 * --trace-gc-nvp and drives GETs that stop at successive layers, 32 in flight: a health check
 * (answered before the API's middleware), /version (authentication and authorization), an
 * OpenStackCluster by name (storage) and a missing one, over HTTP/1.1 keep-alive connections, then
 * the object again over HTTP/2 streams as client-go sends it. For each it prints requests/s, the
 * young-generation collections, and per collection the MB that survived it and the MB moved to the
 * old generation, and the bytes moved per request.
 *
 *   npm run bench:promotion
 *   npm run bench:promotion -- --etcd-servers http://127.0.0.1:2379 --requests 50000
 */
import http2 from 'node:http2';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { pool, table } from '../common.js';
import { Client, readCredentials, startServer } from './server-process.js';
import { startScriptFlags } from '../../harness/start-flags.js';

/** One young-generation collection, from its --trace-gc-nvp line. */
interface Scavenge {
  at: number;
  survivedBytes: number;
  promotedBytes: number;
}

const collection = '/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/default/openstackclusters';
const concurrency = 32;

function parseScavenge(line: string): Scavenge | undefined {
  if (!/\bgc=s\b/.test(line)) return undefined;
  const field = (name: string) => Number(new RegExp(`\\b${name}=(\\d+)`).exec(line)?.[1] ?? Number.NaN);
  return { at: performance.now(), survivedBytes: field('new_space_survived'), promotedBytes: field('promoted') };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'etcd-servers': { type: 'string' }, requests: { type: 'string' } } });
  const requests = Number(values.requests ?? 30_000);
  if (!Number.isInteger(requests) || requests < 1000) throw new Error('--requests must be an integer of at least 1000');
  const scavenges: Scavenge[] = [];
  const nodeFlags = [...startScriptFlags(), '--trace-gc-nvp'];
  const server = await startServer({
    nodeFlags,
    env: values['etcd-servers'] ? { BENCH_ETCD_SERVERS: values['etcd-servers'] } : {},
    onLine: (line) => {
      const scavenge = parseScavenge(line);
      if (scavenge) scavenges.push(scavenge);
    },
  });
  const url = new URL(server.hello.url);
  const credentials = readCredentials(server.hello.kubeconfigPath);
  const client = new Client(url, credentials, 64);
  const session = http2.connect(url, credentials);
  try {
    const created = await client.request('POST', collection, {
      body: JSON.stringify({
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
        kind: 'OpenStackCluster',
        metadata: { name: 'probe' },
        spec: { identityRef: { name: 'cloud', cloudName: 'openstack' } },
      }),
    });
    if (created.status !== 201) throw new Error(`creating the probe's object answered ${created.status}: ${created.body.toString('utf8')}`);

    const overHttp1 = (path: string, expected: number) => async () => {
      const response = await client.request('GET', path);
      if (response.status !== expected) throw new Error(`GET ${path} answered ${response.status}, not ${expected}`);
    };
    const overHttp2 = (path: string, expected: number) => () =>
      new Promise<void>((resolve, reject) => {
        const stream = session.request({ ':method': 'GET', ':path': path });
        stream.once('response', (headers) => {
          if (headers[':status'] !== expected) reject(new Error(`GET ${path} answered ${headers[':status']} over HTTP/2, not ${expected}`));
        });
        stream.resume();
        stream.once('end', resolve);
        stream.once('error', reject);
      });
    const probes = [
      { name: '/healthz (before the middleware)', protocol: 'HTTP/1.1', send: overHttp1('/healthz', 200) },
      { name: '/version (authn, authz)', protocol: 'HTTP/1.1', send: overHttp1('/version', 200) },
      { name: 'an OpenStackCluster by name', protocol: 'HTTP/1.1', send: overHttp1(`${collection}/probe`, 200) },
      { name: 'a missing OpenStackCluster', protocol: 'HTTP/1.1', send: overHttp1(`${collection}/absent`, 404) },
      { name: 'an OpenStackCluster by name', protocol: 'HTTP/2', send: overHttp2(`${collection}/probe`, 200) },
    ];

    const rows = [
      ['requests', 'protocol', 'requests/s', 'young collections', 'survived MB per collection', 'promoted MB per collection', 'promoted bytes per request'],
    ];
    for (const probe of probes) {
      const started = performance.now();
      await pool(requests, concurrency, probe.send);
      const ended = performance.now();
      const during = scavenges.filter((scavenge) => scavenge.at > started && scavenge.at <= ended);
      const sum = (pick: (scavenge: Scavenge) => number) => during.reduce((total, scavenge) => total + pick(scavenge), 0);
      const perCollection = (bytes: number) => (during.length ? (bytes / during.length / 2 ** 20).toFixed(2) : 'n/a');
      const promoted = sum((scavenge) => scavenge.promotedBytes);
      rows.push([
        probe.name,
        probe.protocol,
        (requests / ((ended - started) / 1000)).toFixed(0),
        String(during.length),
        perCollection(sum((scavenge) => scavenge.survivedBytes)),
        perCollection(promoted),
        (promoted / requests).toFixed(0),
      ]);
    }
    const storage = server.hello.storage.backend === 'etcd' ? `etcd at ${server.hello.storage.servers.join(', ')}` : 'SQLite';
    console.log(`${requests} GETs per row, ${concurrency} in flight, server on ${storage}, node flags: ${nodeFlags.join(' ')}`);
    console.log(table(rows));
  } finally {
    session.close();
    client.agent.destroy();
    await server.stop();
  }
}

await main();
