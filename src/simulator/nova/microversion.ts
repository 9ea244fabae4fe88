/**
 * Compute microversion negotiation as nova-api does it: the version comes
 * from `OpenStack-API-Version: compute X` or, failing that, the legacy
 * `X-OpenStack-Nova-API-Version`; absent means the minimum.
 */
import type { NextFunction, Request, Response } from 'express';
import { SimulatorError } from '../framework.js';

/** Zed serves 2.1 to 2.93. Only major version 2 exists, so a version is kept as its minor number. */
export const MIN_MINOR = 1;
export const MAX_MINOR = 93;

const versionPattern = /^([1-9]\d*)\.([1-9]\d*|0)$/;

function requested(req: Request): string | undefined {
  const header = req.get('OpenStack-API-Version');
  if (header) {
    for (const item of header.split(',')) {
      const [service, version] = item.trim().split(/\s+/);
      if (service?.toLowerCase() === 'compute' && version) return version;
    }
  }
  return req.get('X-OpenStack-Nova-API-Version') ?? undefined;
}

export function negotiateMicroversion(req: Request, res: Response, next: NextFunction): void {
  const text = requested(req)?.trim();
  let minor = MIN_MINOR;
  if (text !== undefined && text.toLowerCase() === 'latest') {
    minor = MAX_MINOR;
  } else if (text !== undefined) {
    const match = versionPattern.exec(text);
    if (!match) throw new SimulatorError(400, `API Version String ${text} is of invalid format. Must be of format MajorNum.MinorNum.`);
    const [major, parsedMinor] = [Number(match[1]), Number(match[2])];
    if (major !== 2 || parsedMinor < MIN_MINOR || parsedMinor > MAX_MINOR) {
      throw new SimulatorError(406, `Version ${major}.${parsedMinor} is not supported by the API. Minimum is 2.${MIN_MINOR} and maximum is 2.${MAX_MINOR}.`);
    }
    minor = parsedMinor;
  }
  res.locals.computeMinor = minor;
  res.setHeader('OpenStack-API-Version', `compute 2.${minor}`);
  res.setHeader('X-OpenStack-Nova-API-Version', `2.${minor}`);
  res.setHeader('Vary', 'OpenStack-API-Version, X-OpenStack-Nova-API-Version');
  next();
}

/** The negotiated minor version of this request. */
export function minorOf(res: Response): number {
  return typeof res.locals.computeMinor === 'number' ? res.locals.computeMinor : MIN_MINOR;
}
