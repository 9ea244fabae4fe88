/**
 * The GraphQL endpoint: Apollo Server on the API server's express app,
 * authenticated by the API server's own authenticator before anything is
 * parsed, with CSRF prevention, introspection for authenticated callers, and
 * the depth and cost limits as validation rules.
 */
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express, { type ErrorRequestHandler } from 'express';
import type { IncomingMessage } from 'node:http';
import type { Authorizer } from '../apiserver/auth/authorizer.js';
import type { RequestAuthenticator } from '../apiserver/auth/authenticator.js';
import { anonymousUser, type UserInfo } from '../apiserver/auth/user.js';
import { ApiError } from '../apiserver/errors.js';
import type { Storage } from '../storage/interface.js';
import { InventoryAccess } from '../inventory/access.js';
import { codedError } from './errors.js';
import { InventoryRequest } from '../inventory/request.js';
import { defaultQueryLimits, queryLimitsRule, type QueryLimits } from './limits.js';
import { knownOperationTypesRule } from './operation-types.js';
import { resolvers, type GraphqlContext } from './resolvers.js';
import { readSchemaFile } from './schema-file.js';
import { computedApiVersion } from '../inventory/computed-group.js';

export interface GraphqlDeps {
  storage: Storage;
  authorizer: Authorizer;
  authenticate: RequestAuthenticator;
  limits?: QueryLimits;
}

/** Largest request body: a query document with its variables, never bulk data. */
const maxBodyBytes = 256 * 1024;

/**
 * Largest document, in tokens, parsed at all: the Ansible plugin's query has about 60, so this is
 * room for any hand-written query while bounding the parse and every validation rule after it.
 */
const maxTokens = 5000;

export function createGraphqlServer(limits: QueryLimits = defaultQueryLimits): ApolloServer<GraphqlContext> {
  return new ApolloServer<GraphqlContext>({
    typeDefs: readSchemaFile(),
    resolvers,
    csrfPrevention: true,
    introspection: true,
    includeStacktraceInErrorResponses: false,
    allowBatchedHttpRequests: false,
    // Only two first-party clients (the Ansible plugin, curl) send whole documents; nothing to gain from a query cache.
    persistedQueries: false,
    // The API server owns the process's signal handling and shutdown order.
    stopOnTerminationSignals: false,
    parseOptions: { maxTokens },
    validationRules: [knownOperationTypesRule, queryLimitsRule(limits)],
    plugins: [ApolloServerPluginLandingPageDisabled()],
  });
}

/**
 * POST (and GET, with CSRF prevention's header rule) on `app` at /graphql and under the computed
 * kinds' group-version, where kube-apiserver's aggregator routes it (it authorizes the call as
 * verb `create` on resource `graphql`), so clients reach it with their kubeconfig.
 */
const graphqlPaths = ['/graphql', `/apis/${computedApiVersion}/graphql`];

export function mountGraphql(app: express.Router, deps: GraphqlDeps): void {
  const server = createGraphqlServer(deps.limits);
  // extraRoutes mounts synchronously; requests that arrive before the start completes wait for it.
  server.startInBackgroundHandlingStartupErrorsByLoggingAndFailingAllRequests();
  app.all(
    graphqlPaths,
    express.json({ limit: maxBodyBytes }),
    expressMiddleware(server, {
      context: async ({ req }) => {
        const user = await authenticated(deps.authenticate, req);
        return { inventory: new InventoryRequest(deps.storage, new InventoryAccess(user, deps.authorizer)) };
      },
    }),
    bodyErrors,
  );
}

/** Missing or bad credentials end the request as UNAUTHENTICATED (HTTP 401) with no data. */
async function authenticated(authenticate: RequestAuthenticator, request: IncomingMessage): Promise<UserInfo> {
  let user: UserInfo;
  try {
    user = await authenticate(request);
  } catch (error) {
    if (error instanceof ApiError && error.code === 401) throw codedError('UNAUTHENTICATED', 'the bearer token or client certificate is not valid', 401);
    throw error;
  }
  if (user === anonymousUser)
    throw codedError('UNAUTHENTICATED', 'no credentials: send a bearer token (Authorization: Bearer <token>) or a client certificate', 401);
  return user;
}

/** A body express.json cannot read (too large, not JSON) is answered in GraphQL's error shape, not as an HTML page. */
const bodyErrors: ErrorRequestHandler = (error: { status?: number; message?: string }, _request, response, next) => {
  if (response.headersSent) return next(error);
  const status = typeof error.status === 'number' && error.status >= 400 && error.status < 500 ? error.status : 500;
  response
    .status(status)
    .json({ errors: [{ message: error.message ?? 'bad request', extensions: { code: status === 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST' } }] });
};
