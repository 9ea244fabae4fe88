/**
 * /servers: the routes, and the small ones themselves: show, update, delete,
 * the power actions, an admin's os-resetState and the console output. The
 * create is in server-create.ts, the listing in server-list.ts.
 */
import type { Request, Response, Router } from 'express';
import { z } from 'zod';
import type { SimulatorContext } from '../framework.js';
import { badRequest, invalidState, parseBody, policyForbidden } from './errors.js';
import type { ServerLifecycle } from './lifecycle.js';
import { callerOf, visibleServer, type NovaStore } from './model.js';
import { rebootSchema, resetStateSchema, serverUpdateSchema } from './schemas.js';
import { createServers } from './server-create.js';
import { listServers } from './server-list.js';
import { serverDetail } from './views.js';

export function serverRoutes(api: Router, store: NovaStore, ctx: SimulatorContext, lifecycle: ServerLifecycle, maxLimit?: number): void {
  api.post('/servers', (req, res) => createServers(req, res, store, ctx, lifecycle));
  api.get('/servers', (req, res) => listServers(req, res, false, store, ctx, maxLimit));
  api.get('/servers/detail', (req, res) => listServers(req, res, true, store, ctx, maxLimit));

  api.get('/servers/:id', (req, res) => {
    const caller = callerOf(res);
    res.json({ server: serverDetail(visibleServer(store, req.params.id, caller), caller, ctx, { single: true }) });
  });

  api.put('/servers/:id', (req, res) => updateServer(req, res, store, ctx));

  api.delete('/servers/:id', (req, res) => {
    lifecycle.delete(visibleServer(store, req.params.id, callerOf(res)));
    res.status(204).end();
  });

  api.post('/servers/:id/action', (req, res) => serverAction(req, res, store, lifecycle));
}

/** The fields a PUT may change: names, addresses to show, the disk config. */
function updateServer(req: Request<{ id: string }>, res: Response, store: NovaStore, ctx: SimulatorContext): void {
  const caller = callerOf(res);
  const server = visibleServer(store, req.params.id, caller);
  const changes = parseBody(serverUpdateSchema(caller.minor), req.body).server;
  if (changes.name !== undefined) server.name = changes.name;
  if (changes.description !== undefined) server.description = changes.description;
  if (changes.accessIPv4 !== undefined) server.accessIPv4 = changes.accessIPv4;
  if (changes.accessIPv6 !== undefined) server.accessIPv6 = changes.accessIPv6;
  if (changes['OS-DCF:diskConfig'] !== undefined) server.diskConfig = changes['OS-DCF:diskConfig'];
  if (changes.hostname !== undefined) server.hostname = changes.hostname;
  server.updatedAt = ctx.clock.now();
  res.json({ server: serverDetail(server, caller, ctx, { single: true }) });
}

/** POST /servers/:id/action: the action is the body's one key. */
function serverAction(req: Request<{ id: string }>, res: Response, store: NovaStore, lifecycle: ServerLifecycle): void {
  const caller = callerOf(res);
  const server = visibleServer(store, req.params.id, caller);
  const body = z.record(z.string(), z.unknown()).safeParse(req.body);
  const action = body.success ? Object.keys(body.data)[0] : undefined;
  switch (action) {
    case 'os-stop':
      lifecycle.powerAction(server, 'stop');
      break;
    case 'os-start':
      lifecycle.powerAction(server, 'start');
      break;
    case 'reboot': {
      const type = parseBody(rebootSchema, req.body).reboot.type.toUpperCase();
      lifecycle.powerAction(server, 'reboot', type === 'HARD');
      break;
    }
    case 'os-resetState':
      if (!caller.admin) throw policyForbidden('os_compute_api:os-admin-actions:reset_state');
      lifecycle.resetState(server, parseBody(resetStateSchema, req.body)['os-resetState'].state);
      break;
    case 'os-getConsoleOutput':
      if (server.vmState !== 'active') throw invalidState('get_console_output', server.id, server.vmState);
      // What nova's FakeDriver returns.
      res.json({ output: 'FAKE CONSOLE OUTPUT\nANOTHER\nLAST LINE' });
      return;
    default:
      throw badRequest(`There is no such action: ${action ?? ''}`);
  }
  res.status(202).end();
}
