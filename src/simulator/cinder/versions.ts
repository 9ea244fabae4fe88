/**
 * The simulated Cinder's version documents and the checks every /v3/{project} request passes:
 * OpenStack-API-Version negotiation as cinder.api.openstack.wsgi does it, and the project in the
 * URL against the token's.
 */
import type { NextFunction, Request, Response } from 'express';
import type { SimulatorContext } from '../framework.js';
import { fail } from './errors.js';
import { auth, isAdmin, MAX_VERSION, MIN_VERSION, type Microversion } from './model.js';

/** The microversion negotiate() settled on for this request. */
export const version = (res: Response) => res.locals.volumeVersion as Microversion;
/** The project in the URL (mergeParams is invisible to express's types). */
export const urlProject = (res: Response) => res.locals.projectId as string;

export const versionDoc = (ctx: SimulatorContext) => ({
  id: 'v3.0',
  status: 'CURRENT',
  version: `${MAX_VERSION.major}.${MAX_VERSION.minor}`,
  min_version: `${MIN_VERSION.major}.${MIN_VERSION.minor}`,
  updated: '2022-08-31T00:00:00Z',
  links: [
    { rel: 'describedby', type: 'text/html', href: 'https://docs.openstack.org/' },
    { rel: 'self', href: `${ctx.baseUrl()}/volume/v3/` },
  ],
  'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.volume+json;version=3' }],
});

/** OpenStack-API-Version negotiation as cinder.api.openstack.wsgi does it. */
export const negotiate = (req: Request, res: Response, next: NextFunction) => {
  res.setHeader('Vary', 'OpenStack-API-Version');
  const header = req.get('openstack-api-version');
  let requested = `${MIN_VERSION.major}.${MIN_VERSION.minor}`;
  if (header) {
    const entry = header
      .split(',')
      .map((part) => part.trim().split(/\s+/))
      .find(([service]) => service?.toLowerCase() === 'volume');
    if (entry) requested = entry[1] ?? '';
  }
  let v: Microversion;
  if (requested === 'latest') v = MAX_VERSION;
  else {
    const match = /^(\d+)\.(\d+)$/.exec(requested);
    if (!match || match[1] === '0') return fail(res, 400, `API Version String ${requested} is of invalid format. Must be of format MajorNum.MinorNum.`);
    v = { major: Number(match[1]), minor: Number(match[2]) };
  }
  const tooLow = v.major < MIN_VERSION.major || (v.major === MIN_VERSION.major && v.minor < MIN_VERSION.minor);
  const tooHigh = v.major > MAX_VERSION.major || (v.major === MAX_VERSION.major && v.minor > MAX_VERSION.minor);
  if (tooLow || tooHigh) {
    return fail(
      res,
      406,
      `Version ${v.major}.${v.minor} is not supported by the API. Minimum is ${MIN_VERSION.major}.${MIN_VERSION.minor} and maximum is ${MAX_VERSION.major}.${MAX_VERSION.minor}.`,
    );
  }
  res.setHeader('OpenStack-API-Version', `volume ${v.major}.${v.minor}`);
  res.locals.volumeVersion = v;
  next();
};

/** Cinder answers a project id in the URL that is not the token's with 400 (admins may name any project). */
export const sameProject = (req: Request, res: Response, next: NextFunction) => {
  const scope = auth(res);
  if (req.params.projectId !== scope.projectId && !isAdmin(scope)) return fail(res, 400, 'Malformed request url');
  res.locals.projectId = req.params.projectId;
  next();
};
