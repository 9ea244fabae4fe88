/** Keystone's error body (keystone.exception rendered as JSON). */
const titles: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};
const defaultMessages: Record<number, string> = {
  400: 'The request you have made is malformed.',
  401: 'The request you have made requires authentication.',
  403: 'You are not authorized to perform the requested action.',
  404: 'The resource could not be found.',
  409: 'Conflict occurred attempting to store the resource.',
  500: 'An unexpected error prevented the server from fulfilling your request.',
  503: 'The service is unavailable.',
};

export function keystoneError(status: number, message?: string) {
  return { error: { code: status, message: message ?? defaultMessages[status] ?? titles[status] ?? 'Error', title: titles[status] ?? 'Error' } };
}

/** Keystone's timestamps carry microseconds. */
