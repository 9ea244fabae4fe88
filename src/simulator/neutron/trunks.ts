/**
 * Trunks (the trunk service plugin with the OVS driver, which accepts bound
 * parents): a parent port plus VLAN/inherit sub-ports, with the trunk
 * plugin's validation order and errors. Without an agent the status stays
 * DOWN, as on ministack.
 */
import {
  attr,
  boolean,
  field,
  Invalid,
  ownerAttributes,
  ownerOf,
  parseBody,
  readOnly,
  standardReadOnly,
  string,
  subports,
  uuid,
  createdTags,
  withCreationTags,
} from './body.js';
import { invalidInput, NeutronError, pyStr } from './errors.js';
import { standardView, type Caller, type SubPort, type Trunk } from './model.js';
import type { Store } from './store.js';

const trunkSpec = {
  ...standardReadOnly,
  name: attr(
    field((v) => string(v, 255)),
    true,
    true,
  ),
  description: attr(
    field((v) => string(v, 255)),
    true,
    true,
  ),
  admin_state_up: attr(field(boolean), true, true),
  port_id: attr(field(uuid), true, false, true),
  sub_ports: attr(field(subports), true, false),
  ...ownerAttributes,
  status: readOnly(),
  tags: readOnly(),
};

export function trunkView(t: Trunk): Record<string, unknown> {
  return {
    id: t.id,
    name: t.name,
    tenant_id: t.projectId,
    admin_state_up: t.adminStateUp,
    status: t.status,
    port_id: t.portId,
    sub_ports: t.subPorts.map((sp) => ({ segmentation_id: sp.segmentation_id, segmentation_type: sp.segmentation_type, port_id: sp.port_id })),
    description: t.description,
    ...standardView(t),
  };
}

type RequestedSubPort = ReturnType<typeof subports>[number];

/** Trunk membership rules for a port about to become a parent (`asParent`) or a sub-port. */
function checkPortFree(s: Store, caller: Caller, portId: string, asParent: boolean): void {
  const port = s.port(caller, portId);
  if (s.trunkOfSubport(portId)) throw new NeutronError(409, 'TrunkPortInUse', `Port ${portId} is in use by another trunk.`);
  if (s.trunkOfParent(portId)) throw parentInUse(portId);
  if (!asParent && port.deviceId) {
    throw new NeutronError(
      409,
      'PortInUse',
      `Unable to complete operation on port ${port.id} for network ${port.networkId}. Port already has an attached device ${port.deviceId}.`,
    );
  }
}

const parentInUse = (portId: string) =>
  new NeutronError(409, 'ParentPortInUse', `Port ${portId} is currently in use and is not eligible for use as a parent port.`);

function validateSubPorts(s: Store, caller: Caller, parentPortId: string, requested: RequestedSubPort[]): SubPort[] {
  const parentMtu = s.networks.get(s.ports.get(parentPortId)!.networkId)?.mtu;
  return requested.map((sp) => {
    if (sp.port_id === parentPortId) throw parentInUse(sp.port_id);
    const port = s.ports.get(sp.port_id);
    const network = port && s.networks.get(port.networkId);
    let type = sp.segmentation_type;
    let id = sp.segmentation_id;
    if (type === 'inherit' && network) {
      type = network.networkType;
      id = network.segmentationId ?? undefined;
    }
    if (network && parentMtu !== undefined && network.mtu > parentMtu) {
      throw new NeutronError(
        409,
        'SubPortMtuGreaterThanTrunkPortMtu',
        `MTU ${network.mtu} of subport ${sp.port_id} cannot be greater than MTU ${parentMtu} of trunk ${parentPortId}.`,
      );
    }
    if (type === undefined || id === undefined) {
      throw invalidInput(`Invalid subport details '${pyStr(sp)}': missing segmentation information. Must specify both segmentation_id and segmentation_type`);
    }
    if (type !== 'vlan' && type !== 'inherit') throw invalidInput(`Unknown segmentation_type '${type}'`);
    if (type === 'vlan' && (id < 1 || id > 4094)) throw invalidInput(`Segmentation ID '${id}' is not in range`);
    checkPortFree(s, caller, sp.port_id, false);
    return { port_id: sp.port_id, segmentation_type: type, segmentation_id: id };
  });
}

function addSubPorts(t: Trunk, added: SubPort[]): void {
  for (const sp of added) {
    const clash = t.subPorts.find((e) => e.segmentation_type === sp.segmentation_type && e.segmentation_id === sp.segmentation_id);
    if (clash) {
      throw new NeutronError(
        409,
        'DuplicateSubPort',
        `segmentation_type ${sp.segmentation_type} and segmentation_id ${sp.segmentation_id} already in use on trunk ${t.id}.`,
      );
    }
    t.subPorts.push(sp);
  }
}

export function createTrunk(s: Store, caller: Caller, body: unknown): Trunk {
  const v = parseBody(withCreationTags(trunkSpec, s.options), 'trunk', body, 'POST');
  const projectId = ownerOf(v, caller);
  checkPortFree(s, caller, v.port_id!, true);
  const sub = validateSubPorts(s, caller, v.port_id!, v.sub_ports ?? []);
  const trunk: Trunk = {
    ...s.standard(projectId, v.description ?? '', createdTags(v), 0),
    name: v.name ?? '',
    portId: v.port_id!,
    adminStateUp: v.admin_state_up ?? true,
    status: 'DOWN',
    subPorts: [],
  };
  addSubPorts(trunk, sub);
  s.trunks.set(trunk.id, trunk);
  return trunk;
}

export function updateTrunk(s: Store, caller: Caller, id: string, body: unknown): Trunk {
  const v = parseBody(trunkSpec, 'trunk', body, 'PUT');
  const trunk = s.trunk(caller, id);
  if (v.name !== undefined) trunk.name = v.name;
  if (v.description !== undefined) trunk.description = v.description;
  if (v.admin_state_up !== undefined) trunk.adminStateUp = v.admin_state_up;
  s.touch(trunk);
  return trunk;
}

const disabled = (t: Trunk) => new NeutronError(409, 'TrunkDisabled', `Trunk ${t.id} is currently disabled.`);

export function deleteTrunk(s: Store, caller: Caller, id: string): void {
  const trunk = s.trunk(caller, id);
  if (!trunk.adminStateUp) throw disabled(trunk);
  s.trunks.delete(id);
}

/** The body of add_subports/remove_subports: `{"sub_ports": [...]}`, validated by the plugin (so InvalidInput, not HTTPBadRequest). */
function subPortsBody(body: unknown): RequestedSubPort[] {
  const list = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).sub_ports : undefined;
  try {
    return subports(list);
  } catch (error) {
    if (error instanceof Invalid) throw invalidInput(error.reason);
    throw error;
  }
}

export function addTrunkSubPorts(s: Store, caller: Caller, id: string, body: unknown): Trunk {
  const trunk = s.trunk(caller, id);
  const requested = subPortsBody(body);
  const sub = validateSubPorts(s, caller, trunk.portId, requested);
  if (!trunk.adminStateUp) throw disabled(trunk);
  addSubPorts(trunk, sub);
  trunk.status = 'DOWN';
  s.touch(trunk);
  return trunk;
}

export function removeTrunkSubPorts(s: Store, caller: Caller, id: string, body: unknown): Trunk {
  const trunk = s.trunk(caller, id);
  if (!trunk.adminStateUp) throw disabled(trunk);
  const requested = subPortsBody(body);
  const remaining = [...trunk.subPorts];
  for (const sp of requested) {
    const at = remaining.findIndex((e) => e.port_id === sp.port_id);
    if (at < 0) throw new NeutronError(404, 'SubPortNotFound', `SubPort ${sp.port_id} on trunk ${trunk.id} could not be found.`);
    remaining.splice(at, 1);
  }
  trunk.subPorts = remaining;
  trunk.status = 'DOWN';
  s.touch(trunk);
  return trunk;
}
