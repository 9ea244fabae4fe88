/**
 * The layering of ARCHITECTURE.md, checked on every `npm test`: each folder of src/ may import
 * only the folders below it, no module takes part in an import cycle, and src/ never reaches into
 * the test harness. A wrong import fails the build with the rule's name and comment.
 *
 * @type {import('dependency-cruiser').IConfiguration}
 */

/** `from` may import, inside src/, only itself and the folders in `may`. */
function layer(name, from, may, comment) {
  return { name, comment, severity: 'error', from: { path: from }, to: { path: '^src/', pathNot: [from, ...may] } };
}

const storage = '^src/storage/';
/** The JSON value helpers, the one module of storage/ that layers beside it may share. */
const json = '^src/storage/json\\.ts$';
const observability = '^src/observability/';
const openstack = '^src/openstack/';
const apiserver = '^src/apiserver/';
const infrastructure = '^src/api/infrastructure/';
const capo = '^src/capo/';
const inventory = '^src/inventory/';
const preflight = '^src/preflight/';
const cli = '^src/cli/';

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'Modules import one way; a cycle means code that belongs lower down.', from: {}, to: { circular: true } },
    {
      name: 'no-folder-cycle',
      severity: 'error',
      scope: 'folder',
      comment: 'Folders import one way too: two folders that import each other hold parts of one layer, or two layers in one folder.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    layer('storage', storage, [observability], 'The storage contract and its backends know nothing of the API above them (they log through observability).'),
    layer('observability', observability, [], 'Logs, metrics and health checks are leaves every layer may use.'),
    layer(
      'openstack-client',
      openstack,
      [observability, json],
      'The OpenStack client speaks to clouds; it knows no Kubernetes and no reconciler (JSON helpers aside).',
    ),
    layer(
      'simulator',
      '^src/simulator/',
      [cli],
      'The simulated cloud is written from the services\' behaviour, not from our client, so the fidelity suite compares two independent sides.',
    ),
    layer('apiserver', apiserver, [storage, observability], 'The API machinery is generic: it serves whatever kinds it is given and never knows CAPO, the inventory or the reconciler.'),
    layer('api-infrastructure', infrastructure, [apiserver, storage], 'CAPO\'s kinds are definitions for the API machinery.'),
    layer('api-orc', '^src/api/orc/', [infrastructure, apiserver, storage], 'ORC\'s Image is a definition for the API machinery, built from the CAPO schema blocks.'),
    layer('api-embedded', '^src/api/embedded/', [infrastructure, apiserver, storage], 'The embedded Secret, Cluster, Machine and IPAM kinds are definitions for the API machinery.'),
    layer('capo', capo, [infrastructure, openstack, storage], 'CAPO\'s conventions (names, security group rules, filters) are data both the reconciler and preflight read.'),
    layer('inventory', inventory, [infrastructure, apiserver, storage], 'The inventory is read from storage; the reconciler and the APIs that serve it sit above it.'),
    layer('preflight', preflight, [infrastructure, apiserver, capo, openstack, storage, cli], 'Preflight asks the cloud what a cluster needs; the reconciler runs it, never the reverse.'),
    layer(
      'reconcile',
      '^src/reconcile/',
      [infrastructure, '^src/api/orc/', apiserver, capo, observability, openstack, preflight, storage],
      'The reconciler watches storage and drives OpenStack; nothing below it imports it.',
    ),
    layer(
      'reconcile-runtime',
      '^src/reconcile/runtime/',
      [storage, observability],
      'The controller runtime (loop, queue, backoff, leases, shards, fence) knows no CAPO: what is CAPO\'s (which objects share a shard or a resync, which failures are the cloud\'s) is passed in by reconcile/.',
    ),
    layer('graphql', '^src/graphql/', [inventory, apiserver, storage], 'GraphQL serves the inventory; it shares nothing with the admin API but the inventory.'),
    layer('admin', '^src/admin/', [inventory, apiserver, storage], 'The admin API serves the inventory; it shares nothing with GraphQL but the inventory.'),
    layer(
      'dashboard',
      '^src/dashboard/',
      [inventory, apiserver, storage, '^src/admin/'],
      'The dashboard shows the inventory and acts through the admin API\'s reconciler hooks; nothing below it imports it.',
    ),
    layer('cli', cli, [], 'Command-line helpers for the entry points.'),
    {
      name: 'cli-from-entry-points',
      comment: 'Only a command\'s main.ts parses options and runs a server.',
      severity: 'error',
      from: { path: '^src/', pathNot: '(^|/)main\\.ts$' },
      to: { path: cli },
    },
    {
      name: 'product-without-harness',
      comment: 'The product never imports tests, benchmarks or their harness.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(harness|test|bench|scripts)/' },
    },
    {
      name: 'harness-below-tests',
      comment: 'Tests and benchmarks share the harness; neither imports the other.',
      severity: 'error',
      from: { path: '^(harness|bench)/' },
      to: { path: '^test/' },
    },
    { name: 'tests-without-benchmarks', severity: 'error', comment: 'Tests do not import benchmarks.', from: { path: '^(test|harness)/' }, to: { path: '^bench/' } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
    // TypeScript 7 has no compiler API yet; swc parses the sources, type-only imports included.
    parser: 'swc',
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
