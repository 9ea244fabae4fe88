/** The JSON scalar: Ansible variables and Kubernetes-style specs are schemaless, so they travel as JSON values. */
import { GraphQLScalarType, valueFromASTUntyped } from './graphql-js.js';

export const jsonScalar = new GraphQLScalarType({
  name: 'JSON',
  description: 'Any JSON value.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => valueFromASTUntyped(ast, variables ?? undefined),
});
