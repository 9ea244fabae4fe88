#!/usr/bin/env node
/** `npm run preflight`: the preflight report of a cluster against one cloud of clouds.yaml. */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { UsageError } from '../cli/serve.js';
import { createServiceClients, loadCloud, OpenStackSession, type CloudConfig } from '../openstack/index.js';
import { runPreflight } from './checks.js';
import { findCloudsYaml } from './clouds-file.js';
import { defaultClusterSpec, defaultMachineCount, defaultMachineSpec, readManifests, type ClusterShape, type Manifest } from './manifests.js';
import { formatReport } from './report.js';
import { requirementsOf, type PreflightRequirements } from './requirements.js';

const usage = `Usage: npm run preflight -- --cloud NAME [options]

Checks, before a cluster is created, that the cloud can hold it: the
credentials work, the images and flavors exist, there is one external network
(or the one named), Octavia answers, and the quotas have room for what the
cluster creates. Prints one line per check; exits 0 when all pass, 1 when one
fails, 2 on a usage error.

What is checked comes from the manifests given with -f (OpenStackCluster or
OpenStackClusterTemplate, OpenStackMachine and OpenStackMachineTemplate, in
v1beta1 or v1beta2; a template counts once per replica of the
KubeadmControlPlane or MachineDeployment in the manifests that uses it, once
if none does). Without a cluster in the manifests the default cluster is
checked: a managed network and security groups, the API server load balancer
and a bastion; without machines, 3 control plane machines and 3 workers. The
default machines and the bastion boot --image with --flavor.

clouds.yaml is the first of: --clouds-yaml, $OS_CLIENT_CONFIG_FILE,
./clouds.yaml, ~/.config/openstack/clouds.yaml, /etc/openstack/clouds.yaml,
./data/clouds.yaml (written by npm start).

Options:
  --cloud NAME              the cloud in clouds.yaml (default: $OS_CLOUD)
  --clouds-yaml PATH        the clouds.yaml to read
  -f, --filename FILE       a YAML manifest to read; repeatable
  --image IMAGE             image of the default machines: a name, or an ID
  --flavor FLAVOR           flavor name of the default machines
  --no-load-balancer        the default cluster has no API server load balancer
  --json                    print the report as JSON
  -h, --help                print this help and exit
`;

const options = {
  cloud: { type: 'string' },
  'clouds-yaml': { type: 'string' },
  filename: { type: 'string', short: 'f', multiple: true },
  image: { type: 'string' },
  flavor: { type: 'string' },
  'no-load-balancer': { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof options; strict: true; allowPositionals: false }>>['values'];

/** Every failure of a step that only reads the command line and its files is the user's to fix. */
async function fromInput<T>(step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw error instanceof UsageError ? error : new UsageError(error instanceof Error ? error.message : String(error));
  }
}

async function main(argv: string[]): Promise<number> {
  const { values } = await fromInput(() => parseArgs({ args: argv, options, strict: true, allowPositionals: false }));
  if (values.help) {
    process.stdout.write(usage);
    return 0;
  }
  const cloudName = values.cloud ?? process.env.OS_CLOUD;
  if (cloudName === undefined || cloudName === '') throw new UsageError('--cloud is required (or set OS_CLOUD)');
  const cloudsPath = await fromInput(() =>
    findCloudsYaml({
      ...(values['clouds-yaml'] === undefined ? {} : { explicit: values['clouds-yaml'] }),
      ...(process.env.OS_CLIENT_CONFIG_FILE === undefined ? {} : { configFileVariable: process.env.OS_CLIENT_CONFIG_FILE }),
      cwd: process.cwd(),
      home: os.homedir(),
    }),
  );
  const cloud = await fromInput(async () => loadCloud({ cloudsYaml: await readFile(cloudsPath, 'utf8'), cloudName }));
  const shape = await fromInput(async () => clusterShape(values, cloudName, await readManifestFiles(values.filename ?? [])));
  const requirements = await fromInput(() => requirementsOf(shape.cluster, shape.machines));
  const session = await fromInput(() => OpenStackSession.create(cloud));
  try {
    const report = await runPreflight(createServiceClients(session), session, requirements);
    process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : `${heading(cloud, cloudsPath, requirements)}\n\n${formatReport(report)}`);
    return report.passed ? 0 : 1;
  } finally {
    session.close();
  }
}

async function readManifestFiles(files: readonly string[]): Promise<Manifest[]> {
  return Promise.all(files.map(async (file) => ({ source: file, text: await readFile(file, 'utf8') })));
}

/** The manifests' cluster and machines, the default shape standing in for what they leave out. */
function clusterShape(values: Values, cloudName: string, manifests: Manifest[]): Required<ClusterShape> {
  const found: ClusterShape = manifests.length === 0 ? { machines: [] } : readManifests(manifests);
  const needsDefaults = found.cluster === undefined || found.machines.length === 0;
  const { image, flavor } = values;
  if (found.cluster !== undefined && values['no-load-balancer']) {
    throw new UsageError('--no-load-balancer changes the default cluster; in the manifest, remove spec.apiServer.managedLoadBalancer instead');
  }
  if (!needsDefaults) {
    if (image !== undefined || flavor !== undefined)
      throw new UsageError('--image and --flavor describe the default machines, but the manifests define the cluster and its machines');
    return { cluster: found.cluster, machines: found.machines };
  }
  if (image === undefined || flavor === undefined) {
    throw new UsageError('--image and --flavor are required unless the manifests (-f) define both the cluster and its machines');
  }
  const cluster = found.cluster ?? defaultClusterSpec({ cloudName, image, flavor, loadBalancer: !values['no-load-balancer'] });
  const machines = found.machines.length > 0 ? found.machines : Array.from({ length: defaultMachineCount }, () => defaultMachineSpec({ image, flavor }));
  return { cluster, machines };
}

function heading(cloud: CloudConfig, cloudsPath: string, requirements: PreflightRequirements): string {
  const { instances, loadBalancers } = requirements.demand;
  const servers = instances === 1 ? '1 server' : `${instances} servers`;
  const balancers = loadBalancers === 1 ? '1 load balancer' : `${loadBalancers} load balancers`;
  return `Preflight of a cluster with ${servers} and ${balancers} on cloud "${cloud.name}" (${cloudsPath})`;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`error: ${error.message}\n\n${usage}`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`preflight: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
