/**
 * Flavors, seeded with ministack's m1.* set. Only an admin creates and
 * deletes them (os-flavor-manage), as a cloud operator offers a new size.
 */
import type { Router } from 'express';
import { z } from 'zod';
import type { SimulatorContext } from '../framework.js';
import { conflict, invalidName, notFound, parseBody, policyForbidden } from './errors.js';
import { callerOf, computeUrls, pageOf, queryOne, type Flavor, type NovaStore } from './model.js';

function flavorDetail(flavor: Flavor, minor: number, links: ReturnType<typeof computeUrls>['links']) {
  return {
    id: flavor.id,
    name: flavor.name,
    ram: flavor.ram,
    disk: flavor.disk,
    vcpus: flavor.vcpus,
    'OS-FLV-EXT-DATA:ephemeral': flavor.ephemeral,
    'OS-FLV-DISABLED:disabled': false,
    // Before 2.75 a swap of 0 is shown as an empty string.
    swap: minor >= 75 || flavor.swap !== 0 ? flavor.swap : '',
    rxtx_factor: 1.0,
    'os-flavor-access:is_public': flavor.isPublic,
    links: links('flavors', flavor.id),
    ...(minor >= 55 ? { description: flavor.description } : {}),
    ...(minor >= 61 ? { extra_specs: { ...flavor.extraSpecs } } : {}),
  };
}

const createSchema = z
  .object({
    flavor: z
      .object({
        name: z
          .string()
          .min(1)
          .max(255)
          .refine((name) => name.trim() === name, invalidName('printable characters. Can not start or end with whitespace.')),
        id: z.string().min(1).max(255).nullable().optional(),
        ram: z.coerce.number().int().min(1),
        vcpus: z.coerce.number().int().min(1),
        disk: z.coerce.number().int().min(0),
        'OS-FLV-EXT-DATA:ephemeral': z.coerce.number().int().min(0).optional(),
        swap: z.union([z.literal(''), z.coerce.number().int().min(0)]).optional(),
        rxtx_factor: z.coerce.number().positive().optional(),
        'os-flavor-access:is_public': z.boolean().optional(),
        description: z.string().max(65535).nullable().optional(),
      })
      .strict(),
  })
  .strict();

export function flavorRoutes(api: Router, store: NovaStore, ctx: SimulatorContext): void {
  const urls = computeUrls(ctx);

  const find = (id: string) => {
    const flavor = store.flavors.get(id);
    if (!flavor) throw notFound(`Flavor ${id} could not be found.`);
    return flavor;
  };

  const listed = (query: Record<string, unknown>) => {
    const minDisk = Number(queryOne(query, 'minDisk') ?? 0);
    const minRam = Number(queryOne(query, 'minRam') ?? 0);
    const flavors = [...store.flavors.values()].filter((f) => f.disk >= minDisk && f.ram >= minRam).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    if (queryOne(query, 'sort_dir') === 'desc') flavors.reverse();
    return pageOf(flavors, query, (f) => f.id).page;
  };

  api.get('/flavors', (req, res) => {
    const { minor } = callerOf(res);
    res.json({
      flavors: listed(req.query).map((f) => ({
        id: f.id,
        name: f.name,
        links: urls.links('flavors', f.id),
        ...(minor >= 55 ? { description: f.description } : {}),
      })),
    });
  });

  api.get('/flavors/detail', (req, res) => {
    const { minor } = callerOf(res);
    res.json({ flavors: listed(req.query).map((f) => flavorDetail(f, minor, urls.links)) });
  });

  api.get('/flavors/:id', (req, res) => {
    res.json({ flavor: flavorDetail(find(req.params.id), callerOf(res).minor, urls.links) });
  });

  api.post('/flavors', (req, res) => {
    const caller = callerOf(res);
    if (!caller.admin) throw policyForbidden('os_compute_api:os-flavor-manage:create');
    const body = parseBody(createSchema, req.body).flavor;
    const id = body.id ?? ctx.newId();
    if ([...store.flavors.values()].some((flavor) => flavor.name === body.name)) throw conflict(`Flavor with name ${body.name} already exists.`);
    if (store.flavors.has(id)) throw conflict(`Flavor with ID ${id} already exists.`);
    const flavor: Flavor = {
      id,
      name: body.name,
      vcpus: body.vcpus,
      ram: body.ram,
      disk: body.disk,
      ephemeral: body['OS-FLV-EXT-DATA:ephemeral'] ?? 0,
      swap: body.swap === undefined || body.swap === '' ? 0 : body.swap,
      isPublic: body['os-flavor-access:is_public'] ?? true,
      description: body.description ?? null,
      extraSpecs: {},
    };
    store.flavors.set(id, flavor);
    res.json({ flavor: flavorDetail(flavor, caller.minor, urls.links) });
  });

  api.delete('/flavors/:id', (req, res) => {
    if (!callerOf(res).admin) throw policyForbidden('os_compute_api:os-flavor-manage:delete');
    store.flavors.delete(find(req.params.id).id);
    res.status(202).end();
  });

  api.get('/flavors/:id/os-extra_specs', (req, res) => {
    res.json({ extra_specs: { ...find(req.params.id).extraSpecs } });
  });

  api.get('/flavors/:id/os-extra_specs/:key', (req, res) => {
    const flavor = find(req.params.id);
    const value = flavor.extraSpecs[req.params.key];
    if (value === undefined) throw notFound(`Flavor ${flavor.id} has no extra specs with key ${req.params.key}.`);
    res.json({ [req.params.key]: value });
  });
}
