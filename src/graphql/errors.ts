/**
 * GraphQL errors with the codes clients branch on (the Ansible plugin turns
 * each into one explanation), translated from the request layer's errors.
 */
import { GraphQLError } from './graphql-js.js';
import { ForbiddenError } from '../inventory/access.js';
import { ClusterNotFoundError, InvalidSelectionError } from '../inventory/request.js';

export type ErrorCode = 'UNAUTHENTICATED' | 'FORBIDDEN' | 'NOT_FOUND' | 'BAD_USER_INPUT';

export function codedError(code: ErrorCode, message: string, httpStatus?: number): GraphQLError {
  return new GraphQLError(message, { extensions: { code, ...(httpStatus ? { http: { status: httpStatus } } : {}) } });
}

/** Resolvers run through this, so every known failure leaves with its code and unknown ones stay internal errors. */
export async function withErrorCodes<T>(resolve: () => Promise<T>): Promise<T> {
  try {
    return await resolve();
  } catch (error) {
    if (error instanceof ForbiddenError) throw codedError('FORBIDDEN', error.message);
    if (error instanceof ClusterNotFoundError) throw codedError('NOT_FOUND', error.message);
    if (error instanceof InvalidSelectionError) throw codedError('BAD_USER_INPUT', error.message);
    throw error;
  }
}
