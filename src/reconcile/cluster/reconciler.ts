/**
 * The OpenStackCluster reconciler: network, subnet, router, managed security
 * groups, the API server load balancer and its floating IP, the control
 * plane endpoint, failure domains and the bastion, created in dependency
 * order and deleted in reverse.
 *
 * The steps and what each needs are one graph (clusterSteps, run by
 * step-graph.ts): steps that do not need each other run in the same pass
 * (security groups while the network is made, the bastion while the load
 * balancer builds), so time to Ready follows the critical path rather than
 * the sum of waits. Every ID reaches status right after its create; every
 * wait is a requeue.
 */
import type { JsonObject } from '../../storage/interface.js';
import { isJsonObject } from '../../storage/json.js';
import { isConditionTrue } from '../conditions.js';
import type { Reconcile } from '../runtime/controller.js';
import type { ReconcilerDeps } from '../deps.js';
import { authenticate, deletionProgress } from '../lifecycle.js';
import { specOf, statusOf } from '../objects.js';
import { objectReconciler } from '../object-reconciler.js';
import { describeWaits } from '../reconcile-pass.js';
import { ensureGraph, removeGraph, stepGraph } from '../step-graph.js';
import { clusterGate, setPaused } from '../paused.js';
import type { ClusterContext } from './context.js';
import { reconcileBastion, deleteBastion } from './bastion.js';
import { computeExtensions, endpointOrUndefined } from './extensions.js';
import { reconcileApiEndpoint, deleteApiEndpoint, type Endpoint } from './api-endpoint.js';
import {
  reconcileApiLoadBalancer,
  deleteApiLoadBalancer,
  readApiLoadBalancerAhead,
  lookUpApiLoadBalancerAhead,
  type ApiLoadBalancer,
} from './api-load-balancer.js';
import { reconcileIngressLoadBalancer, deleteIngressLoadBalancer } from './ingress-load-balancer.js';
import {
  reconcileNetwork,
  reconcileRouter,
  deleteNetwork,
  deleteRouter,
  frozenNetworkReferences,
  lookUpNetworkAhead,
  readNetworkingAhead,
  type Networking,
  type Routing,
} from './network.js';
import { reconcileSecurityGroups, deleteSecurityGroups, removeDisabledBastionGroup, lookUpSecurityGroupsAhead } from './security-group-step.js';
import { firstPreflight, reconcilePreflight } from './preflight-step.js';
import { adoptAnnotation, adoptionOf } from '../adoption.js';
import { surveyAdoption } from './adoption-survey.js';

export const clusterFinalizer = 'openstackcluster.infrastructure.cluster.x-k8s.io';

export function openStackClusterReconciler(deps: ReconcilerDeps): Reconcile {
  return objectReconciler(deps, {
    client: deps.clusters,
    finalizer: clusterFinalizer,
    gate: (object) => clusterGate(deps.source, object),
    begin: async (pass, gate) => {
      pass.frozen = frozenNetworkReferences(pass.spec);
      pass.observe((status) => setPaused(status, pass.generation, gate));
      const cloud = await authenticate(deps, pass, pass.spec.identityRef);
      return { pass, spec: pass.spec, cluster: { namespace: pass.meta.namespace, name: pass.meta.name }, cloud, deps };
    },
    normal: (context) => (adoptionOf(context.pass.object) === 'dry-run' ? reportAdoption(context) : reconcileNormal(context)),
    remove: reconcileDelete,
    // Failures of the deletion's own work read as DeleteFailed; reaching the cloud is the pass's, whatever it was for.
    outcome: (_pass, error, stage) => ({ error, failure: { type: 'Ready', reason: stage === 'delete' ? 'DeleteFailed' : 'OpenStackError' } }),
  });
}

/**
 * What the cluster's steps produce; a step's output is what the steps
 * needing it are handed.
 */
interface ClusterOutputs {
  network: Networking;
  router: Routing;
  securityGroups: true;
  apiLoadBalancer: ApiLoadBalancer;
  apiEndpoint: Endpoint;
  ingressLoadBalancer: true;
  failureDomains: true;
  bastion: true;
}

const ready = (done: boolean): true | undefined => (done ? true : undefined);

/**
 * The cluster's steps and what each needs, the one source of their order:
 * the network and security groups at once; the router and both load
 * balancers once the subnet exists (a load balancer's create needs nothing
 * more, and it is the longest wait); the API endpoint, the floating IP on the
 * load balancer's VIP port, once that port and the router exist, while the
 * amphorae boot; the bastion once its network, router and group exist (not
 * after the load balancer, which it does not use). Deletion runs the other
 * way: the endpoint's floating IP and the bastion first, then the load
 * balancers and the router, then the network and the security groups.
 */
const clusterSteps = stepGraph<ClusterContext, ClusterOutputs>({
  network: { needs: [], ensure: reconcileNetwork, remove: deleteNetwork },
  router: { needs: ['network'], ensure: (context, inputs) => reconcileRouter(context, inputs.get('network')), remove: deleteRouter },
  securityGroups: { needs: [], ensure: async (context) => ready(await reconcileSecurityGroups(context)), remove: deleteSecurityGroups },
  apiLoadBalancer: {
    needs: ['network'],
    ensure: (context, inputs) => reconcileApiLoadBalancer(context, inputs.get('network')),
    remove: deleteApiLoadBalancer,
  },
  apiEndpoint: {
    // The router: a floating IP is only associated with a port whose subnet reaches the external network.
    needs: ['network', 'router', 'apiLoadBalancer'],
    ensure: (context, inputs) => reconcileApiEndpoint(context, inputs.get('network'), inputs.get('apiLoadBalancer')),
    remove: deleteApiEndpoint,
  },
  ingressLoadBalancer: {
    needs: ['network'],
    ensure: async (context, inputs) => ready(await reconcileIngressLoadBalancer(context, inputs.get('network'))),
    remove: deleteIngressLoadBalancer,
  },
  failureDomains: {
    needs: [],
    ensure: async (context) => {
      await reconcileFailureDomains(context);
      return true;
    },
  },
  bastion: {
    needs: ['network', 'router', 'securityGroups'],
    ensure: async (context, inputs) => {
      const bastionReady = await reconcileBastion(context, inputs.get('network'));
      await removeDisabledBastionGroup(context);
      return ready(bastionReady);
    },
    remove: (context) => deleteBastion(context),
  },
});

async function reconcileNormal(context: ClusterContext): Promise<void> {
  const { pass } = context;
  // Before its first creates, a cluster that a pass may have made something for (it wrote a status) looks up their names
  // (what a lost create left is adopted, not made twice): those on the way to the load balancer's create start beside the
  // checks, not in rounds of their own after them. Not once the checks have failed: they run again every minute until
  // fixed. A cluster no pass wrote a status for has nothing to look up: its first creates follow a status write instead.
  if (firstPreflight(context) && !pass.madeNothingYet) {
    lookUpNetworkAhead(context);
    lookUpSecurityGroupsAhead(context);
    lookUpApiLoadBalancerAhead(context);
  }
  if (!(await reconcilePreflight(context))) return;
  await pass.createsFollowAWrite();

  readApiLoadBalancerAhead(context);
  readNetworkingAhead(context);
  const { ready: done, blocked } = await ensureGraph(clusterSteps, context, pass);
  // What machines need of the cluster (Cluster API's InfrastructureReady); the bastion and the ingress load balancer are extras.
  const infrastructureReady = done.network !== undefined && done.router !== undefined && done.apiEndpoint !== undefined && done.securityGroups !== undefined;
  if (infrastructureReady) {
    pass.observe((status) => {
      status.initialization = { ...(status.initialization as JsonObject | undefined), provisioned: true };
    });
  }
  if (blocked.has('bastion')) {
    pass.condition({
      type: 'BastionReady',
      status: 'False',
      reason: 'WaitingForInfrastructure',
      message: 'waiting for the cluster network, router and security groups',
    });
  }

  await computeExtensions(context);

  if (infrastructureReady && pass.waiting.length === 0) {
    pass.condition({ type: 'Ready', status: 'True', reason: 'Ready' });
  } else {
    pass.condition({
      type: 'Ready',
      status: 'False',
      reason: infrastructureReady ? 'BastionNotReady' : 'Provisioning',
      message: pass.waiting.length > 0 ? describeWaits(pass.waiting) : 'provisioning',
    });
  }
}

/** What adopting CAPO's resources would take over and create, in the status; nothing else happens. */
async function reportAdoption(context: ClusterContext): Promise<void> {
  const { pass } = context;
  const survey = await surveyAdoption(context);
  pass.observe((status) => {
    status.extensions = { ...(isJsonObject(status.extensions) ? status.extensions : {}), adoption: { adopt: survey.adopt, create: survey.create } };
  });
  pass.condition({
    type: 'Ready',
    status: 'False',
    reason: 'AdoptionDryRun',
    message: `adopting would take over ${survey.adopt.length} resources and create ${survey.create.length} (status.extensions.adoption); set ${adoptAnnotation}: capo to adopt`,
  });
}

/**
 * Availability zones, read once: a transient answer must not make failure
 * domains churn (CAPO main does the same). Nova's available zones are the
 * failure domains; Nova's and Cinder's both go to the extensions, for
 * storage classes that follow the zones.
 */
async function reconcileFailureDomains(context: ClusterContext): Promise<void> {
  const { pass, spec, cloud } = context;
  const extensions = isJsonObject(pass.status.extensions) ? pass.status.extensions : {};
  if (Array.isArray(pass.status.failureDomains) && pass.status.failureDomains.length > 0 && extensions.availabilityZones !== undefined) return;
  const [zones, volumeZones] = await Promise.all([cloud.clients.nova.listAvailabilityZones(), volumeZonesOf(context)]);
  const allowed = spec.controlPlaneAvailabilityZones;
  const domains = zones
    .filter((zone) => zone.zoneState.available)
    .map((zone) => ({
      name: zone.zoneName,
      controlPlane: allowed && allowed.length > 0 ? allowed.includes(zone.zoneName) : !spec.controlPlaneOmitAvailabilityZone,
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  pass.observe((status) => {
    if (!Array.isArray(status.failureDomains) || status.failureDomains.length === 0) status.failureDomains = domains;
    status.extensions = {
      ...extensions,
      availabilityZones: { compute: zones.map((zone) => zone.zoneName).sort(), ...(volumeZones ? { volume: volumeZones } : {}) },
    };
  });
}

/** Cinder's zones; undefined for a cloud without Cinder. */
async function volumeZonesOf(context: ClusterContext): Promise<string[] | undefined> {
  if ((await endpointOrUndefined(context, 'block-storage')) === undefined) return undefined;
  return (await context.cloud.clients.cinder.listAvailabilityZones()).map((zone) => zone.zoneName).sort();
}

/** Everything of the cluster gone from OpenStack, once its machines are: they use its network, security groups and load balancer. */
async function reconcileDelete(context: ClusterContext): Promise<boolean> {
  const { pass, deps, cluster } = context;
  const machines = await deps.machines.list(cluster.namespace, { 'cluster.x-k8s.io/cluster-name': cluster.name });
  if (machines.length > 0) {
    pass.condition({
      type: 'Ready',
      status: 'False',
      reason: 'Deleting',
      message: `waiting for ${machines.length} OpenStackMachine(s) to be deleted first (they use the network, security groups and load balancer)`,
    });
    pass.wait({ waitingFor: 'machines to be deleted', requeueAfterMs: 5_000 }, true);
    return false;
  }
  // Reverse dependency order; each step resumes where a previous pass stopped.
  if (await removeGraph(clusterSteps, context)) return true;
  deletionProgress(pass, 'Ready', 'DeletionBlocked');
  return false;
}

/** The cluster's infrastructure is ready (Cluster API's InfrastructureReady): its network, security groups and API endpoint. */
export function clusterProvisioned(cluster: JsonObject): boolean {
  const { initialization } = statusOf(cluster);
  return isJsonObject(initialization) && initialization.provisioned === true;
}

/**
 * Whether machines may create their servers: what their ports need (the
 * network and subnet, the managed security groups) and the zones their
 * placement reads are there. Not the API load balancer: servers boot while
 * it builds, and only joining it waits for it (machine/reconciler.ts).
 */
export function machinesMayStart(cluster: JsonObject): boolean {
  if (clusterProvisioned(cluster)) return true;
  const status = statusOf(cluster);
  const extensions = isJsonObject(status.extensions) ? status.extensions : {};
  const groupsReady = specOf(cluster).managedSecurityGroups === undefined || isConditionTrue(status, 'SecurityGroupsReady');
  return isConditionTrue(status, 'NetworkReady') && groupsReady && extensions.availabilityZones !== undefined;
}
