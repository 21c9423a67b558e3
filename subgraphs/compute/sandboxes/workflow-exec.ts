import { ValidationError } from '../../../core/errors';

/** Body of the internal route `workflows/sandbox-exec`: a workflow step's command. */
export interface WorkflowExecInput {
  /** The workspace the execution runs in; the sandbox must belong to it. */
  workspaceId: string;
  sandboxId: string;
  /** A string runs through /bin/sh -c; an array is the argv itself (as POST /sandboxes/{id}/exec). */
  command: string | string[];
  /** Kills the command after this long. @defaultValue 60 (the exec route's default) */
  timeoutSeconds?: number;
}

/** What the step gets back: the exec result without the fields a step does not show. */
export interface WorkflowExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

const ID_MAX_LENGTH = 128;
const COMMAND_MAX_CHARS = 131_072;
const ARGV_MAX_ITEMS = 4096;
/** The kernel's limit on one argument (MAX_ARG_STRLEN); a longer one could never run. */
const ARG_MAX_CHARS = 131_072;
const TIMEOUT_MAX_SECONDS = 3600;

/**
 * Checks the route's body; each failure is a 400 naming the field. `maxTimeoutSeconds` is the
 * exec route's own ceiling (COMPUTE_EXEC_MAX_TIMEOUT_SECONDS), said here under this body's name.
 */
export function parseWorkflowExecInput(body: unknown, maxTimeoutSeconds: number): WorkflowExecInput {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new ValidationError('The body must be a JSON object', { field: 'body' });
  const { workspaceId, sandboxId, command, timeoutSeconds } = body as Record<string, unknown>;
  return {
    workspaceId: requireId(workspaceId, 'workspaceId'),
    sandboxId: requireId(sandboxId, 'sandboxId'),
    command: parseCommand(command),
    ...(timeoutSeconds === undefined || timeoutSeconds === null ? {} : { timeoutSeconds: parseTimeout(timeoutSeconds, maxTimeoutSeconds) }),
  };
}

function requireId(value: unknown, field: string): string {
  if (typeof value !== 'string' || !value || value.length > ID_MAX_LENGTH) throw new ValidationError(`${field} must be an id of 1 to ${ID_MAX_LENGTH} characters`, { field });
  return value;
}

function parseCommand(value: unknown): string | string[] {
  if (typeof value === 'string') {
    if (!value.trim()) throw new ValidationError('command must not be empty', { field: 'command' });
    if (value.length > COMMAND_MAX_CHARS || value.includes('\0')) throw new ValidationError(`command must be at most ${COMMAND_MAX_CHARS} characters, without NUL`, { field: 'command' });
    return value;
  }
  if (!Array.isArray(value) || value.length === 0 || value.length > ARGV_MAX_ITEMS) {
    throw new ValidationError(`command must be a string or an array of 1 to ${ARGV_MAX_ITEMS} strings`, { field: 'command' });
  }
  value.forEach((arg, i) => {
    if (typeof arg !== 'string' || arg.length > ARG_MAX_CHARS || arg.includes('\0')) {
      throw new ValidationError(`command[${i}] must be a string of at most ${ARG_MAX_CHARS} characters, without NUL`, { field: `command[${i}]` });
    }
  });
  if (!value[0]) throw new ValidationError('command[0] must not be empty', { field: 'command[0]' });
  return value as string[];
}

function parseTimeout(value: unknown, maxTimeoutSeconds: number): number {
  const max = Math.min(TIMEOUT_MAX_SECONDS, maxTimeoutSeconds);
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new ValidationError(`timeoutSeconds must be an integer from 1 to ${max}`, { field: 'timeoutSeconds' });
  }
  return value;
}
