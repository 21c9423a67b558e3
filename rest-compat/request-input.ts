import { withoutValues } from '../core/errors/mask';
import {
  coerceInputValue,
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLInputType,
} from 'graphql';
import { BadRequestError, ValidationError } from '../core/errors';

/** One argument of a route's field, and where its value may come from. */
export interface RouteArgument {
  name: string;
  type: GraphQLInputType;
  /** Non-null without a default: the request must carry it. */
  required: boolean;
  inPath: boolean;
}

export function routeArguments(args: readonly GraphQLArgument[], pathParams: ReadonlySet<string>): RouteArgument[] {
  return args.map((arg) => ({
    name: arg.name,
    type: arg.type,
    required: isNonNullType(arg.type) && arg.defaultValue === undefined,
    inPath: pathParams.has(arg.name),
  }));
}

/**
 * Parses a request body: empty means `{}`; otherwise it must be JSON (400 BAD_REQUEST) holding an
 * object (400 BAD_REQUEST). Bodies are flat: each key is an argument of the route's field.
 */
export function parseJsonObject(raw: Buffer): Record<string, unknown> {
  if (raw.length === 0) return {};
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    // The parser's message quotes the body, which may hold a secret: only the fact is reported.
    void err;
    throw new BadRequestError('Request body is not valid JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadRequestError('Request body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

/**
 * Checks a request's values against its field's arguments before anything runs, so a caller's
 * mistake is a 400 VALIDATION_FAILED naming the field rather than a GraphQL error from deep
 * inside. The lookup order is sofa's: path parameter, then query parameter, then body key.
 * Query and path values are strings and are read by the argument's type (Int, Float, Boolean,
 * enum, JSON for input objects); body values must already have their JSON type.
 */
export function validateRouteInput(
  args: readonly RouteArgument[],
  params: Record<string, string>,
  query: URLSearchParams | undefined,
  body: Record<string, unknown> | undefined,
): void {
  const problems: Array<{ field: string; message: string }> = [];
  for (const arg of args) {
    let value: unknown;
    if (arg.inPath) {
      value = fromString(arg, [params[arg.name]], problems);
    } else {
      const fromQuery = query?.getAll(arg.name).filter((v) => v !== '');
      if (fromQuery && fromQuery.length > 0) value = fromString(arg, fromQuery, problems);
      else if (body) value = body[arg.name];
    }
    if (value === undefined) {
      if (arg.required) problems.push({ field: arg.name, message: `"${arg.name}" is required` });
      continue;
    }
    if (value === null && !isNonNullType(arg.type)) continue;
    coerceInputValue(value, arg.type, (path, _invalid, error) => {
      const field = [arg.name, ...path].join('.');
      problems.push({ field, message: `Invalid value for "${field}": ${withoutValues(error.message)}` });
    });
  }
  if (problems.length > 0) {
    throw new ValidationError(problems[0].message, { field: problems[0].field, ...(problems.length > 1 ? { problems } : {}) });
  }
}

const NOT_PARSED = Symbol('not parsed');

/** A query or path value, read as the JSON value its argument's type expects. */
function fromString(arg: RouteArgument, raw: string[], problems: Array<{ field: string; message: string }>): unknown {
  const nullable = getNullableType(arg.type);
  const itemType = isListType(nullable) ? getNullableType(nullable.ofType) : nullable;
  if (!isListType(nullable) && raw.length > 1) {
    problems.push({ field: arg.name, message: `"${arg.name}" must be given once` });
    return undefined;
  }
  const values = raw.map((text) => parseText(text, itemType as GraphQLInputType));
  const bad = values.findIndex((v) => v === NOT_PARSED);
  if (bad >= 0) {
    problems.push({ field: arg.name, message: `Invalid value for "${arg.name}": not a valid ${getNamedType(arg.type).name}` });
    return undefined;
  }
  return isListType(nullable) ? values : values[0];
}

function parseText(text: string, type: GraphQLInputType): unknown {
  const named = getNamedType(type);
  // By name: the API schema may come from another copy of graphql-js than ours.
  const scalar = isScalarType(named) ? named.name : undefined;
  if (scalar === 'Int') return /^[+-]?\d+$/.test(text) ? Number(text) : NOT_PARSED;
  if (scalar === 'Float') return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : NOT_PARSED;
  if (scalar === 'Boolean') return text === 'true' ? true : text === 'false' ? false : NOT_PARSED;
  if (scalar === 'String' || scalar === 'ID' || isEnumType(named)) return text;
  if (isInputObjectType(named)) {
    try {
      return JSON.parse(text);
    } catch {
      return NOT_PARSED;
    }
  }
  // Custom scalars (DateTime and the like) travel as strings and are checked by coercion.
  return text;
}
