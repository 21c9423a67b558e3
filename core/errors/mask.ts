import type { GraphQLFormattedError } from 'graphql';
import { DomainError } from './domain-error';
import { isErrorCode, type ErrorCode } from './error-codes';

/** Codes that GraphQL servers raise for a caller's mistake, mapped onto ours. */
const FRAMEWORK_CODES: Record<string, ErrorCode> = {
  GRAPHQL_PARSE_FAILED: 'BAD_REQUEST',
  GRAPHQL_VALIDATION_FAILED: 'VALIDATION_FAILED',
  BAD_USER_INPUT: 'VALIDATION_FAILED',
  BAD_REQUEST: 'BAD_REQUEST',
  PERSISTED_QUERY_NOT_FOUND: 'BAD_REQUEST',
  PERSISTED_QUERY_NOT_SUPPORTED: 'BAD_REQUEST',
  OPERATION_RESOLUTION_FAILURE: 'BAD_REQUEST',
};

/**
 * SQLSTATEs of a value PostgreSQL refuses as such: invalid byte sequence (a NUL in text, 22021),
 * untranslatable character (22P05), invalid text representation (22P02).
 */
const REFUSED_VALUE_STATES = new Set(['22021', '22P05', '22P02']);

export interface MaskOptions {
  /** Keep the original message of unexpected errors (development only). @defaultValue false */
  exposeInternals?: boolean;
  /** Called with every error that gets masked, for logging. */
  onInternal?: (error: unknown) => void;
}

/**
 * Error masking (envelop's useMaskedErrors, as an Apollo `formatError`): domain errors keep
 * their code, message and details; framework errors of the caller become VALIDATION_FAILED or
 * BAD_REQUEST; anything else becomes INTERNAL with no internals.
 */
export function maskError(formatted: GraphQLFormattedError, error: unknown, options: MaskOptions = {}): GraphQLFormattedError {
  const original = originalOf(error);
  if (original instanceof DomainError) {
    return {
      message: original.message,
      path: formatted.path,
      extensions: { code: original.code, ...(original.details ? { details: original.details } : {}) },
    };
  }
  const code = formatted.extensions?.code;
  if (isErrorCode(code) && code !== 'INTERNAL') {
    // Already one of ours (for example a subgraph's error relayed by the gateway).
    const details = formatted.extensions?.details;
    return { message: formatted.message, path: formatted.path, extensions: { code, ...(details ? { details } : {}) } };
  }
  if (typeof code === 'string' && FRAMEWORK_CODES[code]) {
    const validationErrors = (formatted.extensions as Record<string, unknown> | undefined)?.validationErrors;
    return {
      message: withoutValues(formatted.message),
      locations: formatted.locations,
      path: formatted.path,
      extensions: { code: FRAMEWORK_CODES[code], ...(validationErrors ? { details: { validationErrors } } : {}) },
    };
  }
  const sqlState = (original as { code?: unknown } | undefined)?.code;
  if (typeof sqlState === 'string' && REFUSED_VALUE_STATES.has(sqlState) && (original as { name?: unknown }).name === 'QueryFailedError') {
    // A value the caller sent that PostgreSQL cannot store or parse (a NUL byte, say), which no
    // validation caught: the caller's mistake, though the gap is ours, so it is logged too.
    options.onInternal?.(original);
    return { message: 'A value in the request cannot be used (it holds characters or a form that cannot be stored)', path: formatted.path, extensions: { code: 'VALIDATION_FAILED' } };
  }
  options.onInternal?.(original ?? error);
  return {
    message: options.exposeInternals ? formatted.message : 'Internal server error',
    path: formatted.path,
    extensions: { code: 'INTERNAL' },
  };
}

function originalOf(error: unknown): unknown {
  let current = error as { originalError?: unknown } | undefined;
  // GraphQLError wraps the thrown error, sometimes twice (located errors).
  for (let i = 0; i < 3 && current && typeof current === 'object' && 'originalError' in current && current.originalError; i++) {
    current = current.originalError as { originalError?: unknown };
  }
  return current;
}

/**
 * GraphQL's coercion messages quote the offending value ("String cannot represent a non string
 * value: 987654321"); that value may be a secret or a password sent with the wrong type, so the
 * quoted value is dropped and only the variable, field and expected type stay.
 */
export function withoutValues(message: string): string {
  const variable = /^Variable "\$([^"]+)" got invalid value /.exec(message);
  if (variable) {
    const reason = message.slice(message.lastIndexOf('; ') + 2);
    const type = /^(Expected type "[^"]+")|^(\w+) cannot represent/.exec(reason);
    const field = /at "([^"]+)"/.exec(message.slice(variable[0].length));
    const where = field ? ` at "${field[1]}"` : '';
    if (/^Field "[^"]+" of required type "[^"]+" was not provided\.$/.test(reason)) return `Variable "$${variable[1]}"${where}: ${reason}`;
    if (/^Field "[^"]+" is not defined by type "[^"]+"\.$/.test(reason)) return `Variable "$${variable[1]}"${where}: ${reason}`;
    return `Variable "$${variable[1]}"${where} has an invalid value${type ? ` (${type[1] ?? `expected ${type[2]}`})` : ''}`;
  }
  const scalar = /^(\w+) cannot represent /.exec(message);
  if (scalar) return `Invalid value for type ${scalar[1]}`;
  const literal = /^(Expected value of type "[^"]+"), found /.exec(message);
  if (literal) return `${literal[1]}, found an invalid value`;
  return message;
}
