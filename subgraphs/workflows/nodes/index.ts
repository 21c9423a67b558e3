export * from './types';
export { createNodeRegistry, TRUSTED_PLUGINS_HELP, NODE_ID_PATTERN, MAX_NODES, SETTINGS_RANGES, type NodeRegistryOptions } from './registry';
export {
  evaluate, resolveParameters, renderTemplate, compileTemplate, compileExpression, hasExpression, findExpressionError, ExpressionError,
  type ResolveOptions,
} from './expressions';
export { verifyWebhookAuth, webhookRoute, nextScheduleTime, runCode, BUILTIN_NODE_TYPES, testCondition, OPERATORS } from './builtins';
