/**
 * The OpenStackFloatingIPPool reconciler: CAPO's Cluster API IPAM provider
 * for floating IPs. Each IPAddressClaim naming the pool gets an IPAddress of
 * the same name holding a floating IP: first one the pool already has and
 * nobody holds (spec.preAllocatedFloatingIPs, or one of its own a released
 * claim left), else a new one on the pool's external network while fewer
 * than maxIPs are claimed.
 *
 * Neutron is the ledger, not the status. Every floating IP the pool creates
 * carries the pool's owner mark in its description (and its owner and CAPO
 * pool tags once tagged), so one exact-description list per pass finds all
 * of them: one created just before a crash is handed out next instead of
 * leaking, and deleting the pool deletes every one it made, whatever the
 * status says. The status (claimed, available and failed IPs) reports what
 * that list and the IPAddresses show.
 *
 * Releasing: an IPAddress whose claim is gone is deleted (a management
 * cluster's garbage collector does the same through the owner reference);
 * its finalizer holds it until the floating IP is deleted (reclaimPolicy
 * Delete, never for pre-allocated ones) or disassociated and back in the
 * pool (Retain). The pool itself waits for its last IPAddress before its
 * floating IPs go.
 */
import { isIP } from 'node:net';
import type { FloatingIp, NeutronClient } from '../../openstack/index.js';
import type { JsonObject } from '../../storage/interface.js';
import { isJsonObject } from '../../storage/json.js';
import { compareStrings } from '../../apiserver/fieldmanager/value.js';
import { infrastructureGroup } from '../../api/infrastructure/kinds.js';
import { floatingIpPoolTag } from '../../capo/names.js';
import { TerminalError, type Reconcile } from '../runtime/controller.js';
import type { IpamClients, ObjectClient, ReconcilerDeps } from '../deps.js';
import { authenticate } from '../lifecycle.js';
import { resolveNetwork } from '../neutron-filters.js';
import { metaOf, referenceName, specOf, statusOf, stringField, type KindClient } from '../objects.js';
import type { ReconcilePass } from '../reconcile-pass.js';
import type { FloatingIPPoolSpec } from '../kinds.js';
import { objectReconciler } from '../object-reconciler.js';
import { absentOn404, ownerTags } from '../resource/actuator.js';
import { ensureOwnerTags, ownedByAnyone, createTagged, withOwnerMark } from '../resource/neutron.js';
import { clusterNameLabel } from '../paused.js';
import { DependencyFailedError } from '../lookups.js';

export const poolFinalizer = 'openstackfloatingippool.infrastructure.cluster.x-k8s.io';
/** On each IPAddress: the floating IP is released (deleted or returned) before the address goes. */
export const releaseFinalizer = 'openstackfloatingippool.infrastructure.cluster.x-k8s.io/delete-floating-ip';
export const poolKind = 'OpenStackFloatingIPPool';
/** Cluster API's IPAM group, whose claims the pool answers. */
export const ipamGroup = 'ipam.cluster.x-k8s.io';
/** CAPO's spelling of the pool's condition type. */
const readyCondition = 'OpenstackFloatingIPPoolReadyCondition';
/** Addresses still held when the pool is deleted: their claims' deletions wake the pool; this is the fallback. */
const heldAddressesRequeueMs = 60_000;

interface IpamObject {
  object: JsonObject;
  name: string;
  uid: string;
  deleting: boolean;
}

interface PoolContext {
  pass: ReconcilePass<FloatingIPPoolSpec>;
  spec: FloatingIPPoolSpec;
  neutron: NeutronClient;
  ipam: IpamClients;
  /** The floating IPs this pool created, as Neutron lists them now. */
  own: FloatingIp[];
  claimed: Set<string>;
  failed: Set<string>;
  /** The IPAddressClaims naming this pool. */
  claims: IpamObject[];
  /** The IPAddresses of this pool whose claims still stand. */
  addresses: IpamObject[];
}

class NetworkNotFoundError extends TerminalError {
  override name = 'NetworkNotFoundError';
}

/** The OpenStackFloatingIPPool an IPAM object's poolRef names; undefined for another kind of pool. */
export function floatingIpPoolOf(object: JsonObject): string | undefined {
  const ref = specOf(object).poolRef;
  return isJsonObject(ref) && ref.apiGroup === infrastructureGroup && ref.kind === poolKind ? referenceName(ref) : undefined;
}

export function floatingIpPoolReconciler(deps: ReconcilerDeps, pools: KindClient<FloatingIPPoolSpec>): Reconcile {
  return objectReconciler(deps, {
    client: pools,
    finalizer: poolFinalizer,
    begin: (pass) => beginPass(deps, pass),
    normal: async (context) => {
      const networkId = await floatingNetwork(context);
      await answerClaims(
        context,
        networkId,
        context.claims.filter((claim) => !claim.deleting),
        context.addresses,
      );
      reportAddresses(context);
    },
    remove: async (context) => {
      if (await reconcileDelete(context, context.addresses)) return true;
      reportAddresses(context);
      return false;
    },
    outcome: (_pass, error) => ({
      error,
      failure: {
        type: readyCondition,
        reason: error instanceof NetworkNotFoundError ? 'UnableToFindNetwork' : error instanceof DependencyFailedError ? 'DependencyFailed' : 'OpenStackError',
      },
    }),
  });
}

/** The pool's addresses as Neutron and the IPAM objects have them, the addresses of claims that are gone released. */
async function beginPass(deps: ReconcilerDeps, pass: ReconcilePass<FloatingIPPoolSpec>): Promise<PoolContext> {
  const { spec } = pass;
  if (!deps.ipam) throw new DependencyFailedError('IPAddressClaims and IPAddresses are not served here, so the pool cannot answer claims');
  const cloud = await authenticate(deps, pass, spec.identityRef);
  const { neutron } = cloud.clients;
  const own = [
    ...(await neutron.listFloatingIps({ description: poolDescription(pass) })),
    ...(pass.owner.adopt ? await adoptCapoAddresses(pass, neutron) : []),
  ];
  // A pre-allocated address that failed stays failed while the spec names it.
  const failed = ((pass.status.failedIPs as string[] | undefined) ?? []).filter((ip) => spec.preAllocatedFloatingIPs?.includes(ip));
  const claims = await ipamObjectsOf(deps.ipam.claims, pass);
  const context: PoolContext = { pass, spec, neutron, ipam: deps.ipam, own, claimed: new Set(), failed: new Set(failed), claims, addresses: [] };
  context.addresses = await releaseAddresses(context, await ipamObjectsOf(deps.ipam.addresses, pass), claims);
  for (const address of context.addresses) context.claimed.add(addressOf(address.object));
  return context;
}

/** The description of the pool's floating IPs; its owner mark makes it exact, so it finds them all and no others. */
function poolDescription(pass: ReconcilePass): string {
  return withOwnerMark(`${poolKind} ${pass.meta.namespace}/${pass.meta.name}`, pass.owner);
}

/**
 * A pool annotated for adoption (capo-apiserver.io/adopt: capo) takes the
 * floating IPs CAPO's pool of the same name made (CAPO's pool tag, no owner
 * mark of anyone's): they get our description and owner tags, so the
 * description list finds them from now on.
 */
async function adoptCapoAddresses(pass: ReconcilePass, neutron: NeutronClient): Promise<FloatingIp[]> {
  const tagged = await neutron.listFloatingIps({ tags: [floatingIpPoolTag(pass.meta.name)] });
  const adopted: FloatingIp[] = [];
  for (const fip of tagged.filter((candidate) => !ownedByAnyone(candidate))) {
    await ensureOwnerTags(neutron, 'floatingips', fip, pass.owner, [floatingIpPoolTag(pass.meta.name)]);
    adopted.push(await neutron.updateFloatingIp(fip.id, { description: poolDescription(pass) }));
  }
  return adopted;
}

async function ipamObjectsOf(client: ObjectClient, pass: ReconcilePass): Promise<IpamObject[]> {
  const objects = (await client.list(pass.meta.namespace)).filter((object) => floatingIpPoolOf(object) === pass.meta.name);
  return objects
    .map((object) => {
      const meta = metaOf(object);
      return { object, name: meta.name, uid: meta.uid, deleting: meta.deletionTimestamp !== undefined };
    })
    .sort((a, b) => compareStrings(a.name, b.name));
}

function addressOf(address: JsonObject): string {
  return stringField(specOf(address), 'address') ?? '';
}

/**
 * Deletes the addresses whose claim is gone (a claim being deleted still
 * holds its address: its server may still use it) and releases the floating
 * IP of each address being deleted; returns the addresses still held.
 */
async function releaseAddresses(context: PoolContext, addresses: IpamObject[], claims: IpamObject[]): Promise<IpamObject[]> {
  const { ipam } = context;
  const liveClaims = new Map(claims.map((claim) => [claim.name, claim.uid]));
  const held: IpamObject[] = [];
  for (const address of addresses) {
    const meta = metaOf(address.object);
    const claimName = referenceName(specOf(address.object).claimRef);
    const claimUid = meta.ownerReferences?.find((reference) => reference.kind === 'IPAddressClaim')?.uid;
    const orphaned = claimName === undefined || !liveClaims.has(claimName) || (claimUid !== undefined && liveClaims.get(claimName) !== claimUid);
    if (!address.deleting && !orphaned) {
      held.push(address);
      continue;
    }
    if (!address.deleting) await ipam.addresses.delete({ namespace: meta.namespace, name: meta.name }, meta.uid);
    if (meta.finalizers?.includes(releaseFinalizer)) {
      await release(context, addressOf(address.object));
      await ipam.addresses.removeFinalizer({ namespace: meta.namespace, name: meta.name, uid: meta.uid }, releaseFinalizer);
    }
  }
  return held;
}

/** Deletes the floating IP (reclaimPolicy Delete, one the pool made) or returns it to the pool unassociated. */
async function release(context: PoolContext, ip: string): Promise<void> {
  const { spec, neutron, own } = context;
  const owned = own.find((fip) => fip.floating_ip_address === ip);
  if (spec.reclaimPolicy === 'Delete' && owned && !spec.preAllocatedFloatingIPs?.includes(ip)) {
    await absentOn404(neutron.deleteFloatingIp(owned.id));
    context.own = own.filter((fip) => fip !== owned);
    return;
  }
  const fip = owned ?? (await neutron.listFloatingIps({ floating_ip_address: ip }))[0];
  if (fip?.port_id) await neutron.updateFloatingIp(fip.id, { port_id: null });
}

/** The pool's external network, resolved once and kept in status.floatingIPNetwork. */
async function floatingNetwork(context: PoolContext): Promise<string> {
  const { pass, spec, neutron } = context;
  const known = (pass.status.floatingIPNetwork as { id?: string } | undefined)?.id;
  if (known) return known;
  const network = await resolveNetwork(neutron, spec.floatingIPNetwork ?? { filter: {} }, 'spec.floatingIPNetwork', { 'router:external': true }).catch(
    (error: unknown) => {
      throw error instanceof TerminalError ? new NetworkNotFoundError(`Failed to find network: ${error.message}`) : error;
    },
  );
  const status = { id: network.id, name: network.name, ...(network.tags && network.tags.length > 0 ? { tags: [...network.tags] } : {}) };
  await pass.record((current) => {
    current.floatingIPNetwork = status;
  });
  return network.id;
}

/** Gives every claim without a held address one, in name order, until maxIPs stops the pool. */
async function answerClaims(context: PoolContext, networkId: string, claims: IpamObject[], addresses: IpamObject[]): Promise<void> {
  const { pass, ipam } = context;
  const heldByName = new Map(addresses.map((address) => [address.name, address]));
  for (const claim of claims) {
    const addressRef = referenceName(statusOf(claim.object).addressRef);
    if (addressRef !== undefined && heldByName.has(addressRef)) continue;
    // An address made for it before a crash cut the claim's status write short.
    if (!heldByName.has(claim.name)) {
      const ip = await takeAddress(context, networkId);
      if (ip === undefined) {
        pass.condition({
          type: readyCondition,
          status: 'False',
          reason: 'MaxIPsReached',
          message: `Maximum number of IPs (${context.spec.maxIPs}) reached; claim ${claim.name} waits for a release`,
        });
        return;
      }
      const created = await ipam.addresses.create(pass.meta.namespace, addressFor(context, claim, ip));
      heldByName.set(claim.name, { object: created, name: claim.name, uid: metaOf(created).uid, deleting: false });
      context.claimed.add(ip);
    }
    await ipam.claims.updateStatus({ namespace: pass.meta.namespace, name: claim.name, uid: claim.uid }, (status) => {
      status.addressRef = { name: claim.name };
    });
  }
  pass.condition({ type: readyCondition, status: 'True', reason: 'Ready' });
}

function addressFor(context: PoolContext, claim: IpamObject, ip: string): JsonObject {
  const clusterName = metaOf(claim.object).labels?.[clusterNameLabel];
  return {
    metadata: {
      name: claim.name,
      finalizers: [releaseFinalizer],
      ownerReferences: [{ apiVersion: String(claim.object.apiVersion), kind: 'IPAddressClaim', name: claim.name, uid: claim.uid }],
      ...(clusterName === undefined ? {} : { labels: { [clusterNameLabel]: clusterName } }),
    },
    spec: {
      address: ip,
      claimRef: { name: claim.name },
      poolRef: { apiGroup: infrastructureGroup, kind: poolKind, name: context.pass.meta.name },
      prefix: isIP(ip) === 6 ? 128 : 32,
    },
  };
}

/** Floating IPs the pool has and nobody holds: its own first, then the pre-allocated ones. */
function unclaimed(context: PoolContext): string[] {
  const { spec, own, claimed, failed } = context;
  const candidates = [...own.map((fip) => fip.floating_ip_address), ...(spec.preAllocatedFloatingIPs ?? [])];
  return [...new Set(candidates)].filter((ip) => !claimed.has(ip) && !failed.has(ip));
}

/** An unclaimed floating IP that exists, else a new one; undefined when maxIPs are claimed already. */
async function takeAddress(context: PoolContext, networkId: string): Promise<string | undefined> {
  const { pass, spec, neutron, own } = context;
  for (const ip of unclaimed(context)) {
    const owned = own.find((fip) => fip.floating_ip_address === ip);
    if (owned) {
      // One whose tagging a crash cut short is tagged before it goes out.
      await ensureOwnerTags(neutron, 'floatingips', owned, pass.owner, [floatingIpPoolTag(pass.meta.name)]);
      return ip;
    }
    // A pre-allocated address the user named: it must exist in this project.
    if ((await neutron.listFloatingIps({ floating_ip_address: ip })).length > 0) return ip;
    context.failed.add(ip);
  }
  if (spec.maxIPs !== undefined && context.claimed.size >= spec.maxIPs) return undefined;
  const fip = await createTagged(neutron, 'floatingips', [...ownerTags(pass.owner), floatingIpPoolTag(pass.meta.name)], (tagged) =>
    neutron.createFloatingIp({ floating_network_id: networkId, description: poolDescription(pass), ...tagged }),
  );
  context.own = [...own, fip];
  return fip.floating_ip_address;
}

/** True once no address is held and every floating IP the pool made (pre-allocated ones aside) is deleted. */
async function reconcileDelete(context: PoolContext, held: IpamObject[]): Promise<boolean> {
  const { pass, spec, neutron } = context;
  if (held.length > 0) {
    const message = `${held.length} IPAddress(es) still hold floating IPs of the pool: ${held.map((address) => address.name).join(', ')}`;
    pass.condition({ type: readyCondition, status: 'False', reason: 'Deleting', message });
    pass.wait({ waitingFor: message, requeueAfterMs: heldAddressesRequeueMs }, true);
    return false;
  }
  for (const fip of context.own) {
    if (!spec.preAllocatedFloatingIPs?.includes(fip.floating_ip_address)) await absentOn404(neutron.deleteFloatingIp(fip.id));
  }
  context.own = [];
  return true;
}

function reportAddresses(context: PoolContext): void {
  const { pass, claimed, failed } = context;
  pass.observe((status) => {
    status.claimedIPs = [...claimed].sort();
    status.availableIPs = unclaimed(context).sort();
    if (failed.size > 0) status.failedIPs = [...failed].sort();
    else delete status.failedIPs;
  });
}
