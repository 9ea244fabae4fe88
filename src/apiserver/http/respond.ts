/** Writing responses: JSON objects, Status errors and Warning headers. */
import type { ServerResponse } from 'node:http';
import { ApiError, errors } from '../errors.js';

export function sendJson(response: ServerResponse, code: number, body: unknown, contentType = 'application/json', warnings: string[] = []): void {
  const text = JSON.stringify(body);
  setWarnings(response, warnings);
  response.writeHead(code, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text) });
  response.end(text);
}

/** kube's Warning header format: `299 - "<text>"`, one header per warning. */
export function setWarnings(response: ServerResponse, warnings: string[]): void {
  const unique = [...new Set(warnings)];
  if (unique.length > 0) response.setHeader('Warning', unique.map((w) => `299 - ${JSON.stringify(w)}`));
}

export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return errors.internal(error instanceof Error ? error.message : String(error));
}

export function sendError(response: ServerResponse, error: unknown): void {
  const apiError = toApiError(error);
  if (response.headersSent) {
    response.destroy();
    return;
  }
  for (const [name, value] of Object.entries(apiError.headers)) response.setHeader(name, value);
  sendJson(response, apiError.code, apiError.toStatus());
}
