/**
 * The seam between the authenticated HTTP session (auth, catalog, retries,
 * errors, metrics) and the typed per-service calls. Service modules only
 * describe requests and response shapes; the session does the rest.
 */
import type { Readable } from 'node:stream';
import type { z } from 'zod';

/** Keystone catalog service types we talk to. */
export type ServiceType = 'identity' | 'network' | 'compute' | 'load-balancer' | 'image' | 'block-storage';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';

export interface ServiceRequest {
  method: HttpMethod;
  /** Path below the service endpoint, e.g. `/v2.0/networks` or `/servers/{id}`. */
  path: string;
  query?: Record<string, string | number | boolean | readonly string[] | undefined>;
  body?: unknown;
  /**
   * Raw data instead of a JSON body (Glance image content), sent as
   * application/octet-stream. It can be read once, so the request is never
   * retried, and it has no overall deadline, only one on idleness.
   */
  stream?: Readable;
  /** The media type of a JSON body when the service wants its own (Glance's JSON patch); application/json otherwise. */
  contentType?: string;
  /** Service microversion (Nova: X-OpenStack-Nova-API-Version / OpenStack-API-Version). */
  microversion?: string;
  /**
   * True when repeating the request cannot cause a second effect (GET, DELETE
   * by id, PUT of a full value). Only such requests are retried on transient
   * failures; a POST that may have created something never is.
   */
  idempotent?: boolean;
  /** Statuses that count as success (default: any 2xx). */
  expect?: readonly number[];
}

export interface ServiceResponse<T> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | undefined>;
  /** x-openstack-request-id (or the service's equivalent), for logs and errors. */
  requestId?: string;
}

export interface ServiceTransport {
  /**
   * Sends a request to the endpoint of `service` from the Keystone catalog,
   * authenticated, and parses the JSON body with `schema` (an empty body with
   * a void schema is fine). Throws OpenStackError.
   */
  request<T>(service: ServiceType, request: ServiceRequest, schema: z.ZodType<T>): Promise<ServiceResponse<T>>;
}
