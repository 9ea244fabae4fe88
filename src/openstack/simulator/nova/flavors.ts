/** Flavors: read-only, seeded with ministack's m1.* set. */
import type { Router } from 'express';
import type { SimulatorContext } from '../framework.js';
import { notFound } from './errors.js';
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
    const flavors = [...store.flavors.values()]
      .filter((f) => f.disk >= minDisk && f.ram >= minRam)
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
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
