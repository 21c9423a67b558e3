import {
  GraphQLError,
  Kind,
  getNamedType,
  getNullableType,
  isListType,
  type ASTVisitor,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLOutputType,
  type SelectionSetNode,
  type ValidationContext,
  isObjectType,
  isInterfaceType,
  type GraphQLCompositeType,
} from 'graphql';

/** Items a list field is assumed to return when no `limit`/`first` argument says otherwise. */
const DEFAULT_LIST_SIZE = 20;

function limitError(message: string, details: Record<string, unknown>): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'VALIDATION_FAILED', details } });
}

/**
 * Validation rule: refuses operations nested deeper than `maxDepth` fields (fragments are
 * followed, cycles cut). Runs once per distinct document: Apollo caches validated documents.
 */
export function depthLimitRule(maxDepth: number) {
  return (context: ValidationContext): ASTVisitor => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const def of context.getDocument().definitions) {
      if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
    }
    const depthOf = (set: SelectionSetNode | undefined, seen: Set<string>): number => {
      if (!set) return 0;
      let max = 0;
      for (const selection of set.selections) {
        let depth = 0;
        if (selection.kind === Kind.FIELD) {
          if (selection.name.value.startsWith('__')) continue;
          depth = 1 + depthOf(selection.selectionSet, seen);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          depth = depthOf(selection.selectionSet, seen);
        } else {
          const name = selection.name.value;
          const fragment = fragments.get(name);
          if (!fragment || seen.has(name)) continue;
          depth = depthOf(fragment.selectionSet, new Set(seen).add(name));
        }
        if (depth > max) max = depth;
      }
      return max;
    };
    return {
      OperationDefinition(node) {
        const depth = depthOf(node.selectionSet, new Set());
        if (depth > maxDepth) {
          context.reportError(limitError(`Query depth ${depth} exceeds the limit of ${maxDepth}`, { depth, maxDepth }));
        }
      },
    };
  };
}

/**
 * Validation rule: estimates an operation's cost (1 per field, multiplied by the expected size
 * of each enclosing list, read from `limit`/`first`/`last` arguments) and refuses operations
 * costing more than `maxCost`.
 */
export function costLimitRule(maxCost: number) {
  return (context: ValidationContext): ASTVisitor => {
    const schema = context.getSchema();
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const def of context.getDocument().definitions) {
      if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
    }
    const costOf = (set: SelectionSetNode | undefined, parent: GraphQLCompositeType | undefined, seen: Set<string>): number => {
      if (!set) return 0;
      let total = 0;
      for (const selection of set.selections) {
        if (selection.kind === Kind.FIELD) {
          if (selection.name.value.startsWith('__')) continue;
          const field = fieldOf(parent, selection);
          const type = field?.type;
          const named = type ? getNamedType(type) : undefined;
          const child = named && (isObjectType(named) || isInterfaceType(named)) ? named : undefined;
          total += multiplier(type, selection) * (1 + costOf(selection.selectionSet, child, seen));
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          const typeName = selection.typeCondition?.name.value;
          const narrowed = typeName ? (schema.getType(typeName) as GraphQLCompositeType | undefined) : parent;
          total += costOf(selection.selectionSet, narrowed, seen);
        } else {
          const name = selection.name.value;
          const fragment = fragments.get(name);
          if (!fragment || seen.has(name)) continue;
          const narrowed = schema.getType(fragment.typeCondition.name.value) as GraphQLCompositeType | undefined;
          total += costOf(fragment.selectionSet, narrowed, new Set(seen).add(name));
        }
      }
      return total;
    };
    return {
      OperationDefinition(node) {
        const root =
          node.operation === 'query' ? schema.getQueryType() : node.operation === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType();
        const cost = costOf(node.selectionSet, root ?? undefined, new Set());
        if (cost > maxCost) {
          context.reportError(limitError(`Query cost ${cost} exceeds the limit of ${maxCost}`, { cost, maxCost }));
        }
      },
    };
  };
}

function fieldOf(parent: GraphQLCompositeType | undefined, node: FieldNode): GraphQLField<unknown, unknown> | undefined {
  if (!parent || !(isObjectType(parent) || isInterfaceType(parent))) return undefined;
  return parent.getFields()[node.name.value];
}

function multiplier(type: GraphQLOutputType | undefined, node: FieldNode): number {
  if (!type || !isListType(getNullableType(type))) return 1;
  for (const arg of node.arguments ?? []) {
    if (['limit', 'first', 'last'].includes(arg.name.value) && arg.value.kind === Kind.INT) {
      return Math.max(1, Number(arg.value.value));
    }
  }
  return DEFAULT_LIST_SIZE;
}
