/**
 * `npm run preflight` as a user runs it: the compiled CLI in its own process
 * against the OpenStack simulator, its report, exit codes and errors.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/host.js';
import { sourceEntry } from '../../harness/typescript-process.js';

const run = promisify(execFile);
const entry = sourceEntry('src/preflight/main.ts');
let simulator: Simulator;
let dir: string;
let cloudsYaml: string;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in `cwd` with HOME there too, so only the clouds.yaml files a test writes are found. */
async function preflight(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<Result> {
  const cwd = options.cwd ?? dir;
  const env = { PATH: process.env.PATH ?? '', HOME: cwd, ...options.env };
  try {
    const { stdout, stderr } = await run('node', [...entry, ...args], { cwd, env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const defaults = ['--image', 'ubuntu-22.04', '--flavor', 'm1.small'];

beforeAll(async () => {
  simulator = await startSimulator({ transitionDelayMs: 20 });
  dir = await mkdtemp(path.join(os.tmpdir(), 'capo-preflight-'));
  cloudsYaml = path.join(dir, 'sim-clouds.yaml');
  await writeFile(cloudsYaml, simulator.cloudsYaml('sim'));
});

afterAll(async () => {
  await simulator?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('npm run preflight', () => {
  it('prints every option with --help', async () => {
    const { code, stdout } = await preflight(['--help']);
    expect(code).toBe(0);
    for (const option of ['--cloud', '--clouds-yaml', '--filename', '--image', '--flavor', '--no-load-balancer', '--json', '--help'])
      expect(stdout).toContain(option);
  });

  it('exits 0 with a passing report for a cloud that can hold the default cluster', async () => {
    const { code, stdout } = await preflight(['--cloud', 'sim', '--clouds-yaml', cloudsYaml, ...defaults]);
    expect(code).toBe(0);
    expect(stdout).toContain(`Preflight of a cluster with 7 servers and 1 load balancer on cloud "sim" (${cloudsYaml})`);
    expect(stdout).toMatch(/^PASS {2}flavor m1\.small +flavor 'm1\.small' \(id 2\): 1 vCPU, 2048 MiB RAM, 20 GB disk, for 7 servers$/m);
    expect(stdout).toMatch(/^PASS {2}load balancer service +Octavia answers/m);
    expect(stdout).not.toMatch(/^(FAIL|WARN)/m);
    expect(stdout).toMatch(/Preflight passed: \d+ checks passed\.\n$/);
  });

  it('exits 1 and says what to fix when a check fails', async () => {
    const { code, stdout } = await preflight([
      '--cloud',
      'sim',
      '--clouds-yaml',
      cloudsYaml,
      '--image',
      'ubuntu-24.04',
      '--flavor',
      'm1.small',
      '--no-load-balancer',
    ]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^FAIL {2}image ubuntu-24\.04 +image 'ubuntu-24\.04' not found in project demo: upload it or fix spec\.image\.filter\.name$/m);
    expect(stdout).toContain('Preflight of a cluster with 7 servers and 0 load balancers');
    expect(stdout).toMatch(/^PASS {2}load balancer service +not needed/m);
    expect(stdout).toMatch(/Preflight failed: 1 of \d+ checks failed\.\n$/);
  });

  it('prints the report as JSON with --json', async () => {
    const { code, stdout } = await preflight(['--cloud', 'sim', '--clouds-yaml', cloudsYaml, ...defaults, '--json']);
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(report.passed).toBe(true);
    expect(report.checks[0]).toEqual({ name: 'authentication', status: 'pass', message: expect.stringMatching(/^authenticated to project demo/) });
  });

  it('reports refused credentials as a failed check, not a crash', async () => {
    const wrong = path.join(dir, 'wrong-clouds.yaml');
    await writeFile(wrong, simulator.cloudsYaml('sim').replace(/password: .*/g, 'password: wrong'));
    const { code, stdout, stderr } = await preflight(['--cloud', 'sim', '--clouds-yaml', wrong, ...defaults]);
    expect(code).toBe(1);
    expect(stderr).toBe('');
    expect(stdout).toMatch(
      /^FAIL {2}authentication {2}authentication failed: keystone POST \/v3\/auth\/tokens: 401 Unauthorized.*check the credentials of cloud "sim"/m,
    );
    expect(stdout).toContain('Preflight failed: 1 of 1 check failed.');
  });

  it('derives what to check from v1beta1 manifests, templates counted per replica', async () => {
    const manifest = path.join(dir, 'cluster.yaml');
    await writeFile(manifest, clusterManifest);
    const { code, stdout } = await preflight(['--cloud', 'sim', '--clouds-yaml', cloudsYaml, '-f', manifest]);
    expect(stdout).toContain('Preflight of a cluster with 6 servers and 1 load balancer');
    expect(stdout).toMatch(/^PASS {2}flavor m1\.medium +.*for 3 servers$/m);
    // Two workers and the bastion.
    expect(stdout).toMatch(/^PASS {2}flavor m1\.small +.*for 3 servers$/m);
    expect(stdout).toMatch(
      /^FAIL {2}external network +no external network matches spec\.externalNetwork\.filter \(name corporate\) in project demo: fix the filter$/m,
    );
    expect(code).toBe(1);
  });

  it('finds clouds.yaml through OS_CLIENT_CONFIG_FILE, the working directory and data/ (what npm start writes), taking --cloud from OS_CLOUD', async () => {
    const fromVariable = await preflight(defaults, { env: { OS_CLIENT_CONFIG_FILE: cloudsYaml, OS_CLOUD: 'sim' } });
    expect(fromVariable.code).toBe(0);
    expect(fromVariable.stdout).toContain(`on cloud "sim" (${cloudsYaml})`);

    const project = await mkdtemp(path.join(dir, 'project-'));
    await mkdir(path.join(project, 'data'));
    await writeFile(path.join(project, 'data', 'clouds.yaml'), simulator.cloudsYaml('started'));
    const fromData = await preflight(['--cloud', 'started', ...defaults], { cwd: project });
    expect(fromData.code).toBe(0);
    expect(fromData.stdout).toContain(`(${path.join(project, 'data', 'clouds.yaml')})`);

    await writeFile(path.join(project, 'clouds.yaml'), simulator.cloudsYaml('here'));
    const fromCwd = await preflight(['--cloud', 'here', ...defaults], { cwd: project });
    expect(fromCwd.code).toBe(0);
    expect(fromCwd.stdout).toContain(`(${path.join(project, 'clouds.yaml')})`);
  });

  it('exits 2 with the usage for a bad command line or bad input files', async () => {
    const cases: [string[], string | RegExp][] = [
      [['--bogus'], "Unknown option '--bogus'"],
      [['--clouds-yaml', 'x.yaml', ...defaults], '--cloud is required (or set OS_CLOUD)'],
      [['--cloud', 'sim', '--clouds-yaml', cloudsYaml], '--image and --flavor are required unless the manifests (-f) define both the cluster and its machines'],
      [
        ['--cloud', 'sim', '--clouds-yaml', path.join(dir, 'missing.yaml'), ...defaults],
        `--clouds-yaml names ${path.join(dir, 'missing.yaml')}, which does not exist`,
      ],
      [['--cloud', 'sim', ...defaults], /no clouds\.yaml found; looked for .*clouds\.yaml/],
      [['--cloud', 'nope', '--clouds-yaml', cloudsYaml, ...defaults], 'cloud "nope" is not in clouds.yaml; available: sim, sim-admin'],
      [['--cloud', 'sim', '--clouds-yaml', cloudsYaml, '-f', path.join(dir, 'absent.yaml')], 'ENOENT'],
    ];
    for (const [args, message] of cases) {
      const { code, stderr } = await preflight(args);
      expect(code, args.join(' ')).toBe(2);
      expect(stderr, args.join(' ')).toMatch(message instanceof RegExp ? message : new RegExp(`^error: ${escapeRegExp(message)}`));
      expect(stderr).toContain('Usage: npm run preflight');
    }
  });

  it('exits 2 for manifests it cannot use', async () => {
    const write = async (name: string, text: string) => {
      const file = path.join(dir, name);
      await writeFile(file, text);
      return file;
    };
    // biome-ignore lint/suspicious/noTemplateCurlyInString: an unrendered clusterctl variable, as the user would leave it
    const unrendered = '${OPENSTACK_IMAGE_NAME}';
    const cases: [string, string, string][] = [
      [
        'unrendered.yaml',
        clusterManifest.replace('name: ubuntu-22.04', `name: ${unrendered}`),
        `still holds the variable ${unrendered}; render the template first`,
      ],
      [
        'old.yaml',
        'apiVersion: infrastructure.cluster.x-k8s.io/v1alpha7\nkind: OpenStackCluster\nmetadata: {name: old}\nspec: {}\n',
        'apiVersion infrastructure.cluster.x-k8s.io/v1alpha7 is not supported',
      ],
      ['broken.yaml', 'kind: [unclosed\n', 'is not valid YAML at line'],
      ['nothing.yaml', 'apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n', 'the manifests hold no OpenStackCluster'],
      ['invalid.yaml', clusterManifest.replace('flavor: m1.medium', 'flavor: 7'), 'OpenStackMachineTemplate "demo-control-plane" in'],
    ];
    for (const [name, text, message] of cases) {
      const { code, stderr } = await preflight(['--cloud', 'sim', '--clouds-yaml', cloudsYaml, '-f', await write(name, text)]);
      expect(code, name).toBe(2);
      expect(stderr, name).toContain(message);
    }
    const manifest = await write('whole.yaml', clusterManifest);
    const extra = await preflight(['--cloud', 'sim', '--clouds-yaml', cloudsYaml, '-f', manifest, ...defaults]);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain('--image and --flavor describe the default machines, but the manifests define the cluster and its machines');
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** What `clusterctl generate cluster` writes, rendered, in v1beta1, with an external network filter that matches nothing. */
const clusterManifest = `apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: demo
spec:
  infrastructureRef:
    apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
    kind: OpenStackCluster
    name: demo
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: OpenStackCluster
metadata:
  name: demo
spec:
  identityRef:
    name: demo-cloud-config
    cloudName: sim
  managedSubnets:
  - cidr: 10.6.0.0/24
  apiServerLoadBalancer:
    enabled: true
  externalNetwork:
    filter:
      name: corporate
  managedSecurityGroups:
    allowAllInClusterTraffic: false
  bastion:
    enabled: true
    spec:
      flavor: m1.small
      image:
        filter:
          name: ubuntu-22.04
      sshKeyName: demo
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlane
metadata:
  name: demo-control-plane
spec:
  replicas: 3
  machineTemplate:
    infrastructureRef:
      apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
      kind: OpenStackMachineTemplate
      name: demo-control-plane
  version: v1.31.0
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: OpenStackMachineTemplate
metadata:
  name: demo-control-plane
spec:
  template:
    spec:
      flavor: m1.medium
      image:
        filter:
          name: ubuntu-22.04
      sshKeyName: demo
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata:
  name: demo-md-0
spec:
  clusterName: demo
  replicas: 2
  template:
    spec:
      clusterName: demo
      version: v1.31.0
      infrastructureRef:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: OpenStackMachineTemplate
        name: demo-md-0
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: OpenStackMachineTemplate
metadata:
  name: demo-md-0
spec:
  template:
    spec:
      flavor: m1.small
      image:
        filter:
          name: ubuntu-22.04
      sshKeyName: demo
`;
