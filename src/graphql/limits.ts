/**
 * Depth and cost limits, checked as graphql-js validation rules: a query
 * over either limit is refused with the other validation errors, before any
 * resolver runs or storage is read.
 *
 * Depth counts every field, introspection included, because `__Type` refers
 * to itself and would otherwise nest without end. Cost counts the fields
 * that resolvers serve: 1 per field, and a list multiplies the cost of what
 * it selects by its size, taken from the enclosing `first` argument (500,
 * the largest page, when `first` is a variable; the default page size when
 * it is absent) or, for lists inside one object, by a fixed estimate.
 */
import {
  GraphQLError,
  Kind,
  getNamedType,
  getNullableType,
  isInterfaceType,
  isListType,
  isObjectType,
  type ASTVisitor,
  type FieldNode,
  type GraphQLField,
  type GraphQLNamedType,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from './graphql-js.js';

export interface QueryLimits {
  maxDepth: number;
  maxCost: number;
}

export const defaultQueryLimits: QueryLimits = { maxDepth: 15, maxCost: 10_000 };

export const pageSizes = { default: 25, max: 500 } as const;

/** How many items a list inside one object (machines of a cluster, hosts of an inventory) is assumed to hold. */
const nestedListSize = 10;

interface Measure {
  depth: number;
  cost: number;
}

export function queryLimitsRule(limits: QueryLimits): ValidationRule {
  return (context: ValidationContext): ASTVisitor => ({
    OperationDefinition(operation) {
      const root = operation.operation === 'query' ? context.getSchema().getQueryType() : undefined;
      if (!root) return;
      const { depth, cost } = measure(context, operation.selectionSet, root, undefined, new Map());
      const name = operation.name ? `operation ${operation.name.value}` : 'the operation';
      if (depth > limits.maxDepth) {
        context.reportError(
          new GraphQLError(`${name} nests ${depth} fields deep; the limit is ${limits.maxDepth}`, {
            nodes: [operation],
            extensions: { limit: 'depth', allowed: limits.maxDepth, requested: depth },
          }),
        );
      }
      if (cost > limits.maxCost) {
        context.reportError(
          new GraphQLError(
            `${name} costs ${cost}; the limit is ${limits.maxCost}. A list multiplies the cost of what it selects by its page size: ` +
              `ask for a smaller page (first: ${pageSizes.default} is the default) and fetch the next with after: <pageInfo.endCursor>, or ask for fewer fields`,
            { nodes: [operation], extensions: { limit: 'cost', allowed: limits.maxCost, requested: cost } },
          ),
        );
      }
      return false;
    },
  });
}

/**
 * What each fragment measures, by fragment and page size (its type condition is fixed): a
 * fragment is measured once however often it is spread, so a document whose fragments spread each
 * other twice over (2^n paths through n fragments) costs a walk linear in its size. `pending`
 * marks a fragment being measured: a spread that reaches it again is a cycle, which
 * NoFragmentCyclesRule reports, and counts nothing here.
 */
type FragmentMeasures = Map<string, Measure | 'pending'>;

/** `pageSize` is the `first` of the field that owns this selection, which sizes a list directly inside it (edges). */
function measure(
  context: ValidationContext,
  selectionSet: SelectionSetNode,
  parent: GraphQLNamedType,
  pageSize: number | undefined,
  fragments: FragmentMeasures,
): Measure {
  const total: Measure = { depth: 0, cost: 0 };
  const add = (part: Measure) => {
    total.depth = Math.max(total.depth, part.depth);
    total.cost += part.cost;
  };
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      add(measureField(context, selection, parent, pageSize, fragments));
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const type = selection.typeCondition ? context.getSchema().getType(selection.typeCondition.name.value) : parent;
      if (type) add(measure(context, selection.selectionSet, type, pageSize, fragments));
    } else {
      const fragment = context.getFragment(selection.name.value);
      const type = fragment && context.getSchema().getType(fragment.typeCondition.name.value);
      if (!fragment || !type) continue;
      const key = `${fragment.name.value}\u0000${pageSize ?? ''}`;
      const known = fragments.get(key);
      if (known === 'pending') continue;
      if (known) {
        add(known);
        continue;
      }
      fragments.set(key, 'pending');
      const measured = measure(context, fragment.selectionSet, type, pageSize, fragments);
      fragments.set(key, measured);
      add(measured);
    }
  }
  return total;
}

function measureField(
  context: ValidationContext,
  field: FieldNode,
  parent: GraphQLNamedType,
  pageSize: number | undefined,
  fragments: FragmentMeasures,
): Measure {
  const definition = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[field.name.value] : undefined;
  // Introspection is answered from the schema, not storage: it only counts for depth.
  const introspection = field.name.value.startsWith('__') || parent.name.startsWith('__');
  const ownCost = introspection ? 0 : 1;
  const type = definition?.type ?? rootIntrospectionType(context, field);
  if (!field.selectionSet || !type) return { depth: 1, cost: ownCost };
  const inner = measure(context, field.selectionSet, getNamedType(type), pageSizeOf(field, definition), fragments);
  const size = isListType(getNullableType(type)) ? (pageSize ?? nestedListSize) : 1;
  return { depth: 1 + inner.depth, cost: ownCost + size * inner.cost };
}

/** __schema and __type are not among the query type's fields. */
function rootIntrospectionType(context: ValidationContext, field: FieldNode): GraphQLNamedType | undefined {
  const name = { __schema: '__Schema', __type: '__Type' }[field.name.value];
  return name ? context.getSchema().getType(name) : undefined;
}

function pageSizeOf(field: FieldNode, definition: GraphQLField<unknown, unknown> | undefined): number | undefined {
  const declared = definition?.args.find((argument) => argument.name === 'first');
  if (!declared) return undefined;
  const given = field.arguments?.find((argument) => argument.name.value === 'first');
  if (!given) return typeof declared.defaultValue === 'number' ? declared.defaultValue : pageSizes.default;
  if (given.value.kind === Kind.INT) return Math.min(Number(given.value.value), pageSizes.max);
  return pageSizes.max;
}
