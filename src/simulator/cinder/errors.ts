/** Cinder's error body (cinder.api.openstack.wsgi.Fault), and answering a request with one. */
import type { Response } from 'express';
import { wsgiFault } from '../faults.js';

const defaultMessages: Record<number, string> = {
  400: 'The server could not comply with the request since it is either malformed or otherwise incorrect.',
  403: 'Policy does not allow this action to be performed.',
  404: 'The resource could not be found.',
  409: 'There was a conflict when trying to complete your request.',
  413: 'The request is larger than the server is willing or able to process.',
  429: 'The client has sent too many requests in a given amount of time.',
  500: 'The server has either erred or is incapable of performing the requested operation.',
  503: 'The server is currently unavailable. Please try again at a later time.',
};

/** Cinder's Fault rendering (cinder.api.openstack.wsgi.Fault). */
export const cinderError = wsgiFault(defaultMessages, 'An unknown error occurred.');

export const fail = (res: Response, status: number, message?: string) => {
  res.status(status).json(cinderError(status, message));
};
