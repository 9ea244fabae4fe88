/**
 * Refuses operations of a type the schema has no root for (mutations and
 * subscriptions here) during validation, as graphql-js 17's
 * KnownOperationTypesRule does: graphql-js 16 lets them through to execution,
 * which Apollo then reports as an internal server error.
 */
import { GraphQLError, type ASTVisitor, type ValidationContext } from './graphql-js.js';

export function knownOperationTypesRule(context: ValidationContext): ASTVisitor {
  const schema = context.getSchema();
  return {
    OperationDefinition(operation) {
      if (schema.getRootType(operation.operation)) return;
      context.reportError(new GraphQLError(`The schema does not support ${operation.operation} operations.`, { nodes: [operation] }));
    },
  };
}
