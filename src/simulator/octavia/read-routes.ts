/** GET of a top-level collection and of one of its objects, which Octavia answers alike for every kind. */
import type { Router } from 'express';
import { callerOf, listView, narrowedBeforeViews, requireReader, selectFields, type Kind } from './model.js';
import type { OctaviaState } from './state.js';

export function readRoutes(
  api: Router,
  state: OctaviaState,
  kind: Exclude<Kind, 'member'>,
  options: { checkProjectFilter?: boolean; stats?: boolean } = {},
): void {
  const collection = `${kind}s`;
  const path = `/lbaas/${collection}`;

  api.get(path, (req, res) => {
    const caller = callerOf(res);
    // Only the load balancer list refuses a project_id filter naming a project the caller may not read.
    const project = options.checkProjectFilter && typeof req.query.project_id === 'string' ? req.query.project_id : undefined;
    requireReader(caller, project);
    const visible = narrowedBeforeViews(req, [...state.store[kind].values()]).filter((r) => state.visibleTo(r, caller));
    res.json(
      listView(
        req,
        visible.map((r) => state.view(r)),
        collection,
        `${state.ctx.baseUrl()}/load-balancer/v2${path}`,
      ),
    );
  });

  api.get(`${path}/:id`, (req, res) => {
    res.json({ [kind]: selectFields(req, state.view(state.readable(kind, req.params.id, callerOf(res)))) });
  });

  if (options.stats) {
    api.get(`${path}/:id/stats`, (req, res) => {
      state.readable(kind, req.params.id, callerOf(res));
      // No amphora sends statistics with the no-op drivers.
      res.json({ stats: { bytes_in: 0, bytes_out: 0, active_connections: 0, total_connections: 0, request_errors: 0 } });
    });
  }
}
