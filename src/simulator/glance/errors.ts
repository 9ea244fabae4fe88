/** Glance's error body: webob's JSON rendering of an HTTP exception, and answering a request with one. */
import type { Response } from 'express';

/** webob's explanation texts, which Glance's error bodies start with. */
const explanations: Record<number, [string, string]> = {
  400: ['Bad Request', 'The server could not comply with the request since it is either malformed or otherwise incorrect.'],
  401: [
    'Unauthorized',
    'This server could not verify that you are authorized to access the document you requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required.',
  ],
  403: ['Forbidden', 'Access was denied to this resource.'],
  404: ['Not Found', 'The resource could not be found.'],
  405: ['Method Not Allowed', 'The method is not allowed for this resource.'],
  409: ['Conflict', 'There was a conflict when trying to complete your request.'],
  413: ['Request Entity Too Large', 'The body of your request was too large for this server.'],
  415: ['Unsupported Media Type', 'The request media type is not supported by this server.'],
  429: ['Too Many Requests', 'The client has sent too many requests in a given amount of time.'],
  500: ['Internal Server Error', 'The server has either erred or is incapable of performing the requested operation.'],
  503: ['Service Unavailable', 'The server is currently unavailable. Please try again at a later time.'],
};

/**
 * webob's JSON rendering of an HTTP exception (Glance raises webob exceptions
 * with its message as the explanation; clients send Accept: application/json).
 */
export function glanceError(status: number, message?: string) {
  const [title, explanation] = explanations[status] ?? ['Error', ''];
  return { message: `${message ?? explanation}<br /><br />\n\n\n`, code: `${status} ${title}`, title };
}

export const fail = (res: Response, status: number, detail?: string) => {
  res.status(status).json(glanceError(status, detail));
};
