/** The simulated Cinder's quota sets (show, defaults, update, per volume type) and absolute limits. */
import type { Request, Response, Router } from 'express';
import { z } from 'zod';
import { fail } from './errors.js';
import { auth, isAdmin, quotaDefaults, type CinderStore } from './model.js';
import { urlProject } from './versions.js';

const quotaUpdateSchema = z.object({
  quota_set: z.record(
    z.string(),
    z.union([
      z.number().int(),
      z
        .string()
        .regex(/^-?\d+$/)
        .transform(Number),
    ]),
  ),
});

export function quotaRoutes(api: Router, store: CinderStore): void {
  const quotaValue = (n: number) => (n === Infinity ? -1 : n);
  const quotaSet = (projectId: string, withUsage: boolean) => {
    const used = store.usage(projectId);
    const inUse: Record<string, number> = { volumes: used.volumes, gigabytes: used.gigabytes };
    const set: Record<string, unknown> = { id: projectId };
    for (const resource of Object.keys(quotaDefaults)) {
      const value = quotaValue(store.limit(projectId, resource));
      set[resource] = withUsage ? { limit: value, in_use: inUse[resource] ?? 0, reserved: 0, allocated: 0 } : value;
    }
    for (const t of store.types.values()) {
      for (const resource of ['volumes', 'gigabytes', 'snapshots']) {
        const perType = [...store.volumes.values()].filter((vol) => vol.projectId === projectId && vol.volumeTypeId === t.id);
        const typeUse = resource === 'volumes' ? perType.length : resource === 'gigabytes' ? perType.reduce((s, vol) => s + vol.size, 0) : 0;
        set[`${resource}_${t.name}`] = withUsage ? { limit: -1, in_use: typeUse, reserved: 0, allocated: 0 } : -1;
      }
    }
    return set;
  };
  const quotaTarget = (req: Request, res: Response): string | undefined => {
    const scope = auth(res);
    const target = req.params.target as string;
    if (target !== scope.projectId && !isAdmin(scope)) {
      fail(res, 403, 'Policy does not allow volume_extension:quotas:show to be performed.');
      return undefined;
    }
    return target;
  };
  api.get('/os-quota-sets/:target/defaults', (req, res) => {
    const set: Record<string, unknown> = { id: req.params.target };
    for (const [resource, value] of Object.entries(quotaDefaults)) set[resource] = quotaValue(value);
    for (const t of store.types.values()) for (const resource of ['volumes', 'gigabytes', 'snapshots']) set[`${resource}_${t.name}`] = -1;
    res.json({ quota_set: set });
  });
  api.get('/os-quota-sets/:target', (req, res) => {
    const target = quotaTarget(req, res);
    if (target) res.json({ quota_set: quotaSet(target, ['true', 'True', '1'].includes(String(req.query.usage ?? ''))) });
  });
  api.put('/os-quota-sets/:target', (req, res) => {
    if (!isAdmin(auth(res))) return fail(res, 403, 'Policy does not allow volume_extension:quotas:update to be performed.');
    const parsed = quotaUpdateSchema.safeParse(req.body);
    if (!parsed.success) return fail(res, 400, 'Missing required element quota_set in request body.');
    const target = req.params.target as string;
    for (const [resource, value] of Object.entries(parsed.data.quota_set)) {
      if (!(resource in quotaDefaults)) {
        if (/^(volumes|gigabytes|snapshots)_/.test(resource)) continue;
        return fail(res, 400, `Invalid input received: Bad key(s) in quota set: ${resource}`);
      }
      if (value < -1) return fail(res, 400, `Invalid input received: Quota limit ${value} for ${resource} must be -1 or greater.`);
      store.ctx.setQuota(target, resource, value === -1 ? Infinity : value);
    }
    const set = quotaSet(target, false);
    delete set.id;
    res.json({ quota_set: set });
  });

  api.get('/limits', (_req, res) => {
    const projectId = urlProject(res);
    const used = store.usage(projectId);
    res.json({
      limits: {
        rate: [],
        absolute: {
          totalSnapshotsUsed: 0,
          maxTotalBackups: quotaValue(store.limit(projectId, 'backups')),
          maxTotalVolumeGigabytes: quotaValue(store.limit(projectId, 'gigabytes')),
          maxTotalSnapshots: quotaValue(store.limit(projectId, 'snapshots')),
          maxTotalBackupGigabytes: quotaValue(store.limit(projectId, 'backup_gigabytes')),
          totalBackupGigabytesUsed: 0,
          maxTotalVolumes: quotaValue(store.limit(projectId, 'volumes')),
          totalVolumesUsed: used.volumes,
          totalBackupsUsed: 0,
          totalGigabytesUsed: used.gigabytes,
        },
      },
    });
  });
}
