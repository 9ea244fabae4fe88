/**
 * Writers that create OpenStackClusterIdentities as fast as the server acknowledges them, until the
 * server dies under them or they are told to stop: what a crash or shutdown test checks against
 * (every acknowledged name must be stored after the restart). They speak HTTPS with the admin's
 * client certificate from the server's data directory.
 */
import { readFile } from 'node:fs/promises';
import https from 'node:https';
import path from 'node:path';

export interface IdentityWriters {
  /** Names whose create answered 201, in the order the answers came. */
  acknowledged: string[];
  /** Stops starting new creates. */
  stop(): void;
  /** Resolves once every writer has returned (each returns when the server stops answering, or after stop()). */
  finished(): Promise<void>;
}

interface Credentials {
  ca: string;
  cert: string;
  key: string;
}

/** Starts `count` writers against the server at `url`, whose data directory holds the admin's certificate. */
export async function startIdentityWriters(url: string, dataDir: string, prefix: string, count = 8): Promise<IdentityWriters> {
  const read = (file: string) => readFile(path.join(dataDir, 'pki', file), 'utf8');
  const credentials: Credentials = { ca: await read('ca.crt'), cert: await read('admin.crt'), key: await read('admin.key') };
  const acknowledged: string[] = [];
  let writing = true;
  const writers = Array.from({ length: count }, async (_, writer) => {
    for (let i = 0; writing; i++) {
      const name = `${prefix}-${writer}-${i}`;
      const status = await createIdentity(url, credentials, name).catch(() => 0);
      if (status === 201) acknowledged.push(name);
      else if (status === 0) return;
    }
  });
  return {
    acknowledged,
    stop: () => {
      writing = false;
    },
    finished: async () => {
      await Promise.all(writers);
    },
  };
}

function createIdentity(url: string, credentials: Credentials, name: string): Promise<number> {
  const body = JSON.stringify({
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
    kind: 'OpenStackClusterIdentity',
    metadata: { name },
    spec: { secretRef: { name: 'cloud-config', namespace: 'default' } },
  });
  return new Promise((resolve, reject) => {
    const request = https.request(
      `${url}/apis/infrastructure.cluster.x-k8s.io/v1alpha1/openstackclusteridentities`,
      { method: 'POST', ...credentials, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
