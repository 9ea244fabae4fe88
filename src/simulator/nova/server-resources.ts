/** Per-server sub-resources: tags, metadata, os-interface and os-volume_attachments. */
import type { Router } from 'express';
import type { PeerPort, SimulatorContext } from '../framework.js';
import { badRequest, conflict, forbidden, invalidState, notFound, parseBody } from './errors.js';
import type { ServerLifecycle } from './lifecycle.js';
import { callerOf, computeUrls, quotaOf, visibleServer, type BlockDevice, type Caller, type Nic, type NovaStore, type Server } from './model.js';
import { interfaceAttachSchema, metadataBody, metaItemBody, tag as tagSchema, tagsBody, volumeAttachSchema } from './schemas.js';

const MAX_TAGS = 50;
const mutableStates = ['active', 'paused', 'suspended', 'stopped'];

export function serverResourceRoutes(api: Router, store: NovaStore, ctx: SimulatorContext, lifecycle: ServerLifecycle): void {
  const urls = computeUrls(ctx);

  /** An API added by a later microversion is not there (404) for older ones. */
  const since = (caller: Caller, minor: number) => {
    if (caller.minor < minor) throw notFound('The resource could not be found.');
  };

  const mutable = (server: Server, action: string, states = mutableStates) => {
    if (!states.includes(server.vmState)) throw invalidState(action, server.id, server.vmState);
    if (server.taskState !== null) throw conflict(`Cannot '${action}' instance ${server.id} while it is in task_state ${server.taskState}`);
  };

  // Tags (2.26).
  api.get('/servers/:id/tags', (req, res) => {
    const caller = callerOf(res);
    since(caller, 26);
    res.json({ tags: [...visibleServer(store, req.params.id, caller).tags] });
  });

  api.put('/servers/:id/tags', (req, res) => {
    const caller = callerOf(res);
    since(caller, 26);
    const server = visibleServer(store, req.params.id, caller);
    const { tags } = parseBody(tagsBody, req.body);
    mutable(server, 'update tags');
    server.tags = [...new Set(tags)];
    res.json({ tags: [...server.tags] });
  });

  api.delete('/servers/:id/tags', (req, res) => {
    const caller = callerOf(res);
    since(caller, 26);
    const server = visibleServer(store, req.params.id, caller);
    mutable(server, 'delete tags');
    server.tags = [];
    res.status(204).end();
  });

  api.get('/servers/:id/tags/:tag', (req, res) => {
    const caller = callerOf(res);
    since(caller, 26);
    const server = visibleServer(store, req.params.id, caller);
    if (!server.tags.includes(req.params.tag)) throw notFound(`Server ${server.id} has no tag '${req.params.tag}'`);
    res.status(204).end();
  });

  api.put('/servers/:id/tags/:tag', (req, res) => {
    const caller = callerOf(res);
    since(caller, 26);
    const server = visibleServer(store, req.params.id, caller);
    const tag = req.params.tag;
    const valid = tagSchema.safeParse(tag);
    if (!valid.success) {
      throw badRequest(
        `Tag '${tag}' is invalid. It must be a non empty string without characters '/' and ','. Validation error message: ${valid.error.issues[0]!.message}`,
      );
    }
    mutable(server, 'update tag');
    if (server.tags.includes(tag)) {
      res.status(204).end();
      return;
    }
    if (server.tags.length >= MAX_TAGS) throw badRequest(`The number of tags exceeded the per-server limit ${MAX_TAGS}`);
    server.tags.push(tag);
    res
      .status(201)
      .location(`${urls.root()}/v2.1/servers/${server.id}/tags/${encodeURIComponent(tag)}`)
      .end();
  });

  api.delete('/servers/:id/tags/:tag', (req, res) => {
    const caller = callerOf(res);
    since(caller, 26);
    const server = visibleServer(store, req.params.id, caller);
    mutable(server, 'delete tag');
    if (!server.tags.includes(req.params.tag)) throw notFound(`Instance ${server.id} has no tag '${req.params.tag}'`);
    server.tags = server.tags.filter((t) => t !== req.params.tag);
    res.status(204).end();
  });

  // Metadata.
  const setMetadata = (server: Server, caller: Caller, metadata: Record<string, string>, action: string) => {
    mutable(server, action);
    const limit = quotaOf(ctx, caller.projectId, 'metadata_items');
    if (Object.keys(metadata).length > limit) throw forbidden(`Maximum number of metadata items exceeds ${limit}`);
    server.metadata = metadata;
    server.updatedAt = ctx.clock.now();
  };

  api.get('/servers/:id/metadata', (req, res) => {
    res.json({ metadata: { ...visibleServer(store, req.params.id, callerOf(res)).metadata } });
  });

  api.post('/servers/:id/metadata', (req, res) => {
    const caller = callerOf(res);
    const server = visibleServer(store, req.params.id, caller);
    const { metadata } = parseBody(metadataBody, req.body);
    setMetadata(server, caller, { ...server.metadata, ...metadata }, 'update metadata');
    res.json({ metadata: { ...server.metadata } });
  });

  api.put('/servers/:id/metadata', (req, res) => {
    const caller = callerOf(res);
    const server = visibleServer(store, req.params.id, caller);
    const { metadata } = parseBody(metadataBody, req.body);
    setMetadata(server, caller, { ...metadata }, 'update metadata');
    res.json({ metadata: { ...server.metadata } });
  });

  api.get('/servers/:id/metadata/:key', (req, res) => {
    const server = visibleServer(store, req.params.id, callerOf(res));
    const value = server.metadata[req.params.key];
    if (value === undefined) throw notFound('Metadata item was not found');
    res.json({ meta: { [req.params.key]: value } });
  });

  api.put('/servers/:id/metadata/:key', (req, res) => {
    const caller = callerOf(res);
    const server = visibleServer(store, req.params.id, caller);
    const { meta } = parseBody(metaItemBody, req.body);
    const key = req.params.key;
    if (!(key in meta)) throw badRequest('Request body and URI mismatch');
    if (Object.keys(meta).length > 1) throw badRequest('Request body contains too many items');
    setMetadata(server, caller, { ...server.metadata, [key]: meta[key]! }, 'update metadata');
    res.json({ meta: { [key]: meta[key] } });
  });

  api.delete('/servers/:id/metadata/:key', (req, res) => {
    const caller = callerOf(res);
    const server = visibleServer(store, req.params.id, caller);
    if (!(req.params.key in server.metadata)) throw notFound('Metadata item was not found');
    const { [req.params.key]: _removed, ...rest } = server.metadata;
    setMetadata(server, caller, rest, 'delete metadata');
    res.status(204).end();
  });

  // Interfaces.
  const interfaceView = (port: PeerPort, nic: Nic, minor: number) => ({
    port_state: port.status,
    fixed_ips: port.fixed_ips.map((ip) => ({ subnet_id: ip.subnet_id, ip_address: ip.ip_address })),
    port_id: port.id,
    net_id: port.network_id,
    mac_addr: port.mac_address,
    ...(minor >= 70 ? { tag: nic.tag ?? null } : {}),
  });

  api.get('/servers/:id/os-interface', (req, res) => {
    const caller = callerOf(res);
    const server = visibleServer(store, req.params.id, caller);
    const attachments = server.nics.flatMap((nic) => {
      const port = ctx.peers.network?.getPort(nic.portId);
      return port ? [interfaceView(port, nic, caller.minor)] : [];
    });
    res.json({ interfaceAttachments: attachments });
  });

  api.get('/servers/:id/os-interface/:portId', (req, res) => {
    const caller = callerOf(res);
    const server = visibleServer(store, req.params.id, caller);
    const nic = server.nics.find((n) => n.portId === req.params.portId);
    const port = nic ? ctx.peers.network?.getPort(nic.portId) : undefined;
    if (!nic || !port) throw notFound(`Instance ${server.id} does not have a port with id ${req.params.portId}`);
    res.json({ interfaceAttachment: interfaceView(port, nic, caller.minor) });
  });

  api.post('/servers/:id/os-interface', (req, res) => {
    const caller = callerOf(res);
    const server = visibleServer(store, req.params.id, caller);
    const spec = parseBody(interfaceAttachSchema(caller.minor), req.body).interfaceAttachment ?? {};
    if (spec.net_id && spec.port_id) throw badRequest('Must not input both network_id and port_id');
    if (spec.fixed_ips && !spec.net_id) throw badRequest('Must input network_id when request IP address');
    // Without either, Nova picks the project's only network; listing networks is beyond the Neutron peer.
    if (!spec.net_id && !spec.port_id) throw badRequest('Must input network_id or port_id');
    mutable(server, 'attach_interface', ['active', 'paused', 'stopped']);
    const tag = spec.tag ? { tag: spec.tag } : {};
    let nic: Nic;
    let port: PeerPort;
    if (spec.port_id) {
      const existing = ctx.peers.network?.getPort(spec.port_id);
      if (!existing) throw notFound(`Port id ${spec.port_id} could not be found.`);
      if (existing.device_id || lifecycle.portClaimed(existing.id)) throw conflict(`Port ${existing.id} is still in use.`);
      port = lifecycle.bindPort(server, existing.id);
      nic = { portId: port.id, createdByNova: false, ...tag };
    } else {
      const network = ctx.peers.network?.getNetwork(spec.net_id!);
      if (!network) throw notFound(`Network ${spec.net_id} could not be found.`);
      port = lifecycle.createPort(server, network.id, spec.fixed_ips?.[0]?.ip_address);
      nic = { portId: port.id, createdByNova: true, ...tag };
    }
    server.nics.push(nic);
    server.updatedAt = ctx.clock.now();
    res.json({ interfaceAttachment: interfaceView(port, nic, caller.minor) });
  });

  api.delete('/servers/:id/os-interface/:portId', (req, res) => {
    const caller = callerOf(res);
    const server = visibleServer(store, req.params.id, caller);
    mutable(server, 'detach_interface', ['active', 'paused', 'stopped']);
    const nic = server.nics.find((n) => n.portId === req.params.portId);
    if (!nic) throw notFound(`Port id ${req.params.portId} could not be found.`);
    server.nics = server.nics.filter((n) => n !== nic);
    lifecycle.releaseNic(nic);
    server.updatedAt = ctx.clock.now();
    res.status(202).end();
  });

  // Volume attachments.
  const attachmentView = (server: Server, bd: BlockDevice, minor: number) => ({
    ...(minor >= 89 ? {} : { id: bd.volumeId }),
    volumeId: bd.volumeId,
    serverId: server.id,
    ...(bd.device ? { device: bd.device } : {}),
    ...(minor >= 70 ? { tag: bd.tag ?? null } : {}),
    ...(minor >= 79 ? { delete_on_termination: bd.deleteOnTermination } : {}),
    ...(minor >= 89 ? { attachment_id: bd.attachmentId ?? null, bdm_uuid: bd.bdmId } : {}),
  });
  const attached = (server: Server) => server.blockDevices.filter((bd) => bd.volumeId && bd.attachmentId);

  api.get('/servers/:id/os-volume_attachments', (req, res) => {
    const caller = callerOf(res);
    const server = visibleServer(store, req.params.id, caller);
    res.json({ volumeAttachments: attached(server).map((bd) => attachmentView(server, bd, caller.minor)) });
  });

  api.get('/servers/:id/os-volume_attachments/:volumeId', (req, res) => {
    const caller = callerOf(res);
    const server = visibleServer(store, req.params.id, caller);
    const bd = attached(server).find((b) => b.volumeId === req.params.volumeId);
    if (!bd) throw notFound(`Instance ${server.id} is not attached to volume ${req.params.volumeId}`);
    res.json({ volumeAttachment: attachmentView(server, bd, caller.minor) });
  });

  api.post('/servers/:id/os-volume_attachments', (req, res) => {
    const caller = callerOf(res);
    const server = visibleServer(store, req.params.id, caller);
    const spec = parseBody(volumeAttachSchema(caller.minor), req.body).volumeAttachment;
    mutable(server, 'attach_volume', ['active', 'paused', 'stopped', 'shelved', 'shelved_offloaded']);
    const volume = lifecycle.requireVolume(spec.volumeId);
    if (volume.status !== 'available' && !(volume.multiattach && volume.status === 'in-use')) {
      throw badRequest(`Invalid volume: volume '${volume.id}' status must be 'available'. Currently in '${volume.status}'`);
    }
    const bd: BlockDevice = {
      sourceType: 'volume',
      destinationType: 'volume',
      uuid: volume.id,
      volumeId: volume.id,
      bootIndex: null,
      deleteOnTermination: spec.delete_on_termination ?? false,
      ...(spec.tag ? { tag: spec.tag } : {}),
      createdByNova: false,
      device: lifecycle.nextDevice(server),
      bdmId: ctx.newId(),
    };
    lifecycle.attachBlockDevice(server, bd);
    server.blockDevices.push(bd);
    res.json({
      volumeAttachment: {
        id: volume.id,
        serverId: server.id,
        volumeId: volume.id,
        device: bd.device,
        ...(caller.minor >= 70 ? { tag: bd.tag ?? null } : {}),
        ...(caller.minor >= 79 ? { delete_on_termination: bd.deleteOnTermination } : {}),
      },
    });
  });

  api.delete('/servers/:id/os-volume_attachments/:volumeId', (req, res) => {
    const caller = callerOf(res);
    const server = visibleServer(store, req.params.id, caller);
    mutable(server, 'detach_volume', ['active', 'paused', 'stopped', 'shelved', 'shelved_offloaded', 'resized', 'soft-delete']);
    const bd = attached(server).find((b) => b.volumeId === req.params.volumeId);
    if (!bd) throw notFound(`Instance ${server.id} is not attached to volume ${req.params.volumeId}`);
    if (bd.bootIndex === 0) throw badRequest('Cannot detach a root device volume');
    lifecycle.releaseBlockDevice(server, { ...bd, deleteOnTermination: false });
    server.blockDevices = server.blockDevices.filter((b) => b !== bd);
    res.status(202).end();
  });
}
