import { GraphQLScalarType, Kind, type ValueNode } from 'graphql';

function literalValue(node: ValueNode): unknown {
  switch (node.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return node.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return node.values.map(literalValue);
    case Kind.OBJECT:
      return Object.fromEntries(node.fields.map((f) => [f.name.value, literalValue(f.value)]));
    default:
      return undefined;
  }
}

/**
 * Any JSON value, for arguments whose shape varies by design (a command given as a string or
 * an argv array). The service that takes it validates it and answers 400 naming the field.
 */
export const JSONScalar = new GraphQLScalarType({
  name: 'JSON',
  description: 'Any JSON value.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: literalValue,
});

/** A JSON object (environment variables, labels); its services check the values. */
export const JSONObjectScalar = new GraphQLScalarType({
  name: 'JSONObject',
  description: 'A JSON object.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: literalValue,
});
