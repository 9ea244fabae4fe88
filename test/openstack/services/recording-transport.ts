/**
 * A ServiceTransport that records each request and answers from a queue of
 * canned bodies, parsed with the caller's schema exactly as the session
 * parses real responses (so a schema too strict for a real body fails here).
 */
import type { z } from 'zod';
import type { ServiceRequest, ServiceResponse, ServiceTransport, ServiceType } from '../../../src/openstack/transport.js';

export interface RecordedCall extends ServiceRequest {
  service: ServiceType;
}

export class RecordingTransport implements ServiceTransport {
  readonly calls: RecordedCall[] = [];
  private readonly replies: { status: number; body: unknown }[] = [];

  /** Queues the body of the next response; undefined stands for an empty body (204). */
  reply(body: unknown, status = 200): this {
    this.replies.push({ status, body });
    return this;
  }

  get last(): RecordedCall {
    const call = this.calls.at(-1);
    if (call === undefined) throw new Error('no request was made');
    return call;
  }

  async request<T>(service: ServiceType, request: ServiceRequest, schema: z.ZodType<T>): Promise<ServiceResponse<T>> {
    this.calls.push({ service, ...structuredClone(request) });
    const reply = this.replies.shift();
    if (reply === undefined) throw new Error(`no reply queued for ${request.method} ${request.path}`);
    const parsed = schema.safeParse(reply.body);
    if (!parsed.success) throw new Error(`reply to ${request.method} ${request.path} does not parse: ${parsed.error.message}`);
    return { status: reply.status, body: parsed.data, headers: {}, requestId: 'req-test' };
  }
}
