/**
 * The `npm start` entry point as a user runs it: the CLI (from its sources) in its own
 * process, its data directory, kubectl with the kubeconfig it writes, and a
 * clean shutdown on SIGTERM.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { OpenStackSession, createServiceClients, loadCloud } from '../src/openstack/index.js';
import { etcdUnavailable, startEtcd } from '../harness/etcd.js';
import { EtcdStorage } from '../src/storage/etcd.js';
import { startScriptFlags } from '../harness/start-flags.js';
import { sourceEntry } from '../harness/typescript-process.js';
import { startIdentityWriters } from '../harness/identity-writers.js';

const run = promisify(execFile);
/** As `npm start` runs it: its node flags, then the CLI from its sources. */
const entry = [...startScriptFlags(), ...sourceEntry('src/main.ts')];
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'capo-main-'));
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

function start(args: string[]): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn('node', [...entry, ...args]);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${output}`)), 20_000);
    child.stdout!.on('data', () => {
      const match = /serving on (https:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1], output: () => output });
      }
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

describe('npm start', () => {
  it('prints every option with --help', async () => {
    const { stdout } = await run('node', [...entry, '--help']);
    for (const option of [
      '--data-dir',
      '--port',
      '--secure-port',
      '--bind-address',
      '--tls-cert-file',
      '--tls-private-key-file',
      '--cloud-port',
      '--no-simulated-cloud',
      '--simulated-cloud',
      '--max-requests-inflight',
      '--max-mutating-requests-inflight',
      '--request-timeout',
      '--dashboard-session-lifetime',
      '--image-download-allow',
      '--image-download-max-bytes',
      '--image-download-max-ratio',
      '--image-download-timeout',
      '--image-download-concurrency',
      '--image-download-concurrency-per-namespace',
      '--kubeconfig',
      '--authentication-kubeconfig',
      '--authorization-kubeconfig',
      '--authentication-skip-lookup',
      '--client-ca-file',
      '--requestheader-client-ca-file',
      '--requestheader-allowed-names',
      '--requestheader-username-headers',
      '--requestheader-uid-headers',
      '--requestheader-group-headers',
      '--requestheader-extra-headers-prefix',
      '--authorization-always-allow-paths',
      '--storage',
      '--watch-cache',
      '--reconcile-shards',
      '--etcd-servers',
      '--etcd-prefix',
      '--etcd-cafile',
      '--etcd-certfile',
      '--etcd-keyfile',
      '--leader-elect',
      '--leader-elect-lease-duration',
      '--leader-elect-renew-deadline',
      '--leader-elect-retry-period',
      '--leader-elect-resource-name',
      '--leader-elect-resource-namespace',
      '--v',
      '--help',
    ]) {
      expect(stdout).toContain(option);
    }
  });

  it('refuses unknown options and bad ports with a clear error', async () => {
    // Each case is its own process; they run side by side.
    const attempt = (args: string[]): Promise<{ code?: number; stderr: string }> =>
      run('node', [...entry, ...args]).catch((error) => error as { code: number; stderr: string });
    const [unknown, ports, timeouts] = await Promise.all([
      attempt(['--bogus']),
      Promise.all(['abc', '', '0x50', '1e3', '70000'].map((bad) => attempt(['--port', bad]).then((result) => ({ bad, result })))),
      Promise.all(['60', '1d', '0s', '25h', 'm', ''].map((bad) => attempt(['--request-timeout', bad]).then((result) => ({ bad, result })))),
    ]);
    expect(unknown.code).toBe(2);
    // The error and where the usage is, not the usage: 75 lines of it would bury the one that matters.
    expect(unknown.stderr.trim().split('\n')).toEqual([expect.stringContaining("error: Unknown option '--bogus'"), "See 'npm start -- --help' for usage."]);
    for (const { bad, result } of ports) {
      expect(result.code, bad).toBe(2);
      expect(result.stderr).toContain('--port must be an integer from 0 to 65535');
    }
    for (const { bad, result } of timeouts) {
      expect(result.code, bad).toBe(2);
      expect(result.stderr).toContain('--request-timeout must be a duration from 1s to 24h such as 60s or 1m30s');
    }
  }, 180_000);

  it('finds a busy port before it writes anything: no data directory is left behind', async () => {
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as net.AddressInfo).port;
    const dataDir = path.join(os.tmpdir(), `capo-busy-${port}`);
    try {
      const result = await run('node', [...entry, '--port', String(port), '--data-dir', dataDir, '--no-simulated-cloud']).catch(
        (error) => error as { code: number; stderr: string },
      );
      expect(result).toMatchObject({ code: 1, stderr: `capo-apiserver: cannot listen on 127.0.0.1:${port}: address already in use (another instance?)\n` });
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      busy.close();
    }
  }, 60_000);

  it('refuses storage and leader election flags that do not fit together', async () => {
    const attempt = (args: string[]): Promise<{ code?: number; stderr: string }> =>
      run('node', [...entry, ...args]).catch((error) => error as { code: number; stderr: string });
    const cases: [string[], string][] = [
      [['--storage', 'mysql'], '--storage must be sqlite or etcd, not "mysql"'],
      [['--storage', 'etcd'], '--storage etcd needs --etcd-servers'],
      [['--etcd-servers', 'http://127.0.0.1:2379'], '--etcd-servers needs --storage etcd'],
      [['--storage', 'etcd', '--etcd-servers', '127.0.0.1:2379'], '--etcd-servers: "127.0.0.1:2379" is not an http(s) URL'],
      [['--storage', 'etcd', '--etcd-servers', 'http://127.0.0.1:2379', '--etcd-certfile', 'client.crt'], '--etcd-certfile and --etcd-keyfile go together'],
      [['--leader-elect=yes'], 'invalid argument "yes" for "--leader-elect" flag: must be true or false'],
      // pflag's booleans: =false turns it off, and bare is true (it reaches the lease check).
      [['--leader-elect=false', '--reconcile-shards', '4'], '--reconcile-shards needs --leader-elect'],
      [['--leader-elect', '--leader-elect-renew-deadline', '20s'], '--leader-elect-lease-duration must exceed --leader-elect-renew-deadline'],
      [['--reconcile-shards', '0'], '--reconcile-shards must be at least 1'],
      [['--reconcile-shards', '4'], '--reconcile-shards needs --leader-elect'],
      [['--watch-cache=off'], 'invalid argument "off" for "--watch-cache" flag: must be true or false'],
      [['--leader-elect=True', '--leader-elect-renew-deadline', '20s'], '--leader-elect-lease-duration must exceed --leader-elect-renew-deadline'],
      [
        ['--image-download-allow', '10.0.0.0/33'],
        '--image-download-allow: "10.0.0.0/33" is not a destination to allow (the prefix length must be from 0 to 32)',
      ],
      [
        ['--image-download-allow', 'mirror.example:80'],
        '--image-download-allow: "mirror.example:80" is not a destination to allow (not an IP address or CIDR)',
      ],
      [['--image-download-max-bytes', '16GB'], '--image-download-max-bytes must be a size such as 512Mi, 16Gi or a number of bytes, got "16GB"'],
      [['--image-download-timeout', '0s'], '--image-download-timeout must be a duration from 1s to 24h'],
      [['--image-download-concurrency-per-namespace', '0'], 'must be at least 1'],
    ];
    const results = await Promise.all(cases.map(([args]) => attempt(args)));
    results.forEach((result, i) => {
      expect(result.code, cases[i]![0].join(' ')).toBe(2);
      expect(result.stderr).toContain(cases[i]![1]);
    });
  }, 120_000);

  it.skipIf(etcdUnavailable() !== undefined)(
    `runs several servers on one etcd, each serving the others' writes and watches${etcdUnavailable() ? ` (skipped: ${etcdUnavailable()})` : ''}`,
    async () => {
      const etcd = await startEtcd();
      const directories = await Promise.all([0, 1].map(() => mkdtemp(path.join(os.tmpdir(), 'capo-replica-'))));
      const replicas = await Promise.all(
        directories.map((dir) =>
          start(['--data-dir', dir, '--port', '0', '--no-simulated-cloud', '--storage', 'etcd', '--etcd-servers', etcd.servers.join(',')]),
        ),
      );
      try {
        const kubectl = (index: number, args: string[]) =>
          run('kubectl', args, { env: { ...process.env, KUBECONFIG: path.join(directories[index]!, 'kubeconfig'), HOME: directories[index]! } });
        expect(existsSync(path.join(directories[0]!, 'capo.db'))).toBe(false);
        const watcher = spawn('kubectl', ['get', 'secrets', '-n', 'default', '-w', '-o', 'name'], {
          env: { ...process.env, KUBECONFIG: path.join(directories[1]!, 'kubeconfig'), HOME: directories[1]! },
        });
        let watched = '';
        const seen = new Promise<void>((resolve) => {
          watcher.stdout.on('data', (chunk) => {
            watched += chunk;
            if (watched.includes('secret/shared')) resolve();
          });
        });
        const manifest = path.join(directories[0]!, 'secret.json');
        await writeFile(
          manifest,
          JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'shared', namespace: 'default' }, stringData: { k: 'v' } }),
        );
        await kubectl(0, ['apply', '-f', manifest]);
        await seen;
        watcher.kill();
        const read = JSON.parse((await kubectl(1, ['get', 'secret', 'shared', '-n', 'default', '-o', 'json'])).stdout);
        expect(Buffer.from(read.data.k, 'base64').toString()).toBe('v');
        await kubectl(1, ['delete', 'secret', 'shared', '-n', 'default']);
        await expect(kubectl(0, ['get', 'secret', 'shared', '-n', 'default'])).rejects.toMatchObject({ stderr: expect.stringContaining('NotFound') });
      } finally {
        for (const replica of replicas) replica.child.kill('SIGTERM');
        await Promise.all(replicas.map((replica) => exited(replica.child)));
        await etcd.stop();
        for (const dir of directories) await rm(dir, { recursive: true, force: true });
      }
    },
    120_000,
  );

  it.skipIf(etcdUnavailable() !== undefined)(
    `keeps open watches through a compaction of etcd, answers a watch from a compacted resourceVersion with 410 Expired, and the client recovers by relisting${etcdUnavailable() ? ` (skipped: ${etcdUnavailable()})` : ''}`,
    async () => {
      const etcd = await startEtcd();
      const dir = await mkdtemp(path.join(os.tmpdir(), 'capo-compaction-'));
      const server = await start(['--data-dir', dir, '--port', '0', '--no-simulated-cloud', '--storage', 'etcd', '--etcd-servers', etcd.servers.join(',')]);
      const env = { ...process.env, KUBECONFIG: path.join(dir, 'kubeconfig'), HOME: dir };
      const kubectl = (args: string[]) => run('kubectl', args, { env });
      const secret = (name: string) => ['create', 'secret', 'generic', name, '-n', 'default', '--from-literal=k=v'];
      const compactor = await EtcdStorage.open({ servers: etcd.servers, compactionIntervalMs: 0 });
      try {
        const watcher = spawn('kubectl', ['get', 'secrets', '-n', 'default', '-w', '-o', 'name'], { env });
        // One listener gathers the output; each wait checks it on every chunk (a listener per wait would append each chunk again).
        let watched = '';
        const waits = new Set<() => void>();
        watcher.stdout.on('data', (chunk) => {
          watched += chunk;
          for (const check of waits) check();
        });
        const sees = (name: string) =>
          new Promise<void>((resolve) => {
            const check = () => {
              if (!watched.includes(`secret/${name}`)) return;
              waits.delete(check);
              resolve();
            };
            waits.add(check);
            check();
          });
        await kubectl(secret('before'));
        await sees('before');
        const resourceVersion = JSON.parse((await kubectl(['get', 'secret', 'before', '-n', 'default', '-o', 'json'])).stdout).metadata
          .resourceVersion as string;
        await kubectl(secret('between'));
        // As the replicas' compaction does, an interval apart: record the current revision, then compact to it.
        await compactor.compact();
        await compactor.compact();
        expect(await compactor.compactedRevision()).toBeGreaterThan(Number(resourceVersion));
        await kubectl(secret('after'));
        await sees('after');
        expect(watched.trim().split('\n')).toEqual(['secret/before', 'secret/between', 'secret/after']);
        watcher.kill();

        const resumed = await kubectl(['get', '--raw', `/api/v1/namespaces/default/secrets?watch=1&resourceVersion=${resourceVersion}`]).catch(
          (error: { stderr: string }) => error,
        );
        expect(resumed.stderr).toMatch(/Expired|too old resource version/);
        // The relist: current state and its resourceVersion, then a watch from there that sees the next write.
        const listed = JSON.parse((await kubectl(['get', '--raw', '/api/v1/namespaces/default/secrets'])).stdout);
        expect(listed.items.map((item: { metadata: { name: string } }) => item.metadata.name)).toEqual(['after', 'before', 'between']);
        const rewatch = spawn(
          'kubectl',
          ['get', '--raw', `/api/v1/namespaces/default/secrets?watch=1&resourceVersion=${listed.metadata.resourceVersion}&timeoutSeconds=30`],
          { env },
        );
        let streamed = '';
        const next = new Promise<void>((resolve) => {
          rewatch.stdout.on('data', (chunk) => {
            streamed += chunk;
            if (streamed.includes('"name":"next"')) resolve();
          });
        });
        await kubectl(secret('next'));
        await next;
        rewatch.kill();
        expect(
          streamed
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line).type),
        ).toEqual(['ADDED']);
      } finally {
        await compactor.close();
        server.child.kill('SIGTERM');
        await exited(server.child);
        await etcd.stop();
        await rm(dir, { recursive: true, force: true });
      }
    },
    120_000,
  );

  it('serves on its data directory, works with kubectl and stops cleanly on SIGTERM', async () => {
    const server = await start(['--data-dir', dataDir, '--port', '0', '--cloud-port', '0']);
    for (const file of ['capo.db', 'kubeconfig', 'clouds.yaml', 'pki/ca.crt', 'pki/apiserver.crt', 'pki/admin.key']) {
      expect(existsSync(path.join(dataDir, file)), file).toBe(true);
    }
    const env = { ...process.env, KUBECONFIG: path.join(dataDir, 'kubeconfig'), HOME: dataDir };
    const ready = await run('kubectl', ['get', '--raw', '/readyz'], { env });
    expect(ready.stdout).toBe('ok');
    const version = await run('kubectl', ['version', '-o', 'json'], { env });
    expect(JSON.parse(version.stdout).serverVersion.gitVersion).toMatch(/capo-apiserver/);
    // The embedded cloud answers with the credentials its clouds.yaml gives.
    const cloud = loadCloud({ cloudsYaml: await readFile(path.join(dataDir, 'clouds.yaml'), 'utf8'), cloudName: 'simulator' });
    const session = await OpenStackSession.create(cloud);
    const images = await createServiceClients(session).glance.listImages();
    session.close();
    expect(images.map((image) => image.name)).toContain('ubuntu-22.04');
    const caBefore = await readFile(path.join(dataDir, 'pki/ca.crt'), 'utf8');

    server.child.kill('SIGTERM');
    expect(await exited(server.child)).toBe(0);
    expect(server.output()).toContain('shutting down');

    // A restart on the same directory keeps the CA, so existing kubeconfigs stay valid.
    const again = await start(['--data-dir', dataDir, '--port', '0', '--cloud-port', '0']);
    expect(await readFile(path.join(dataDir, 'pki/ca.crt'), 'utf8')).toBe(caBefore);
    again.child.kill('SIGINT');
    expect(await exited(again.child)).toBe(0);
  });

  it('keeps every acknowledged write across kill -9', async () => {
    const crashDir = await mkdtemp(path.join(os.tmpdir(), 'capo-crash-'));
    try {
      const server = await start(['--data-dir', crashDir, '--port', '0', '--cloud-port', '0']);
      const writes = await startIdentityWriters(server.url, crashDir, 'crash');
      await vi.waitFor(() => expect(writes.acknowledged.length).toBeGreaterThanOrEqual(200), { timeout: 30_000, interval: 10 });
      server.child.kill('SIGKILL');
      writes.stop();
      await writes.finished();
      await exited(server.child);

      const restarted = await start(['--data-dir', crashDir, '--port', '0', '--cloud-port', '0']);
      const env = { ...process.env, KUBECONFIG: path.join(crashDir, 'kubeconfig'), HOME: crashDir };
      const { stdout } = await run('kubectl', ['get', 'openstackclusteridentities', '-o', 'name'], { env, maxBuffer: 16 * 1024 * 1024 });
      const stored = new Set(
        stdout
          .trim()
          .split('\n')
          .map((line) => line.split('/')[1]),
      );
      expect(writes.acknowledged.filter((name) => !stored.has(name))).toEqual([]);
      restarted.child.kill('SIGTERM');
      expect(await exited(restarted.child)).toBe(0);
    } finally {
      await rm(crashDir, { recursive: true, force: true });
    }
  });
});
