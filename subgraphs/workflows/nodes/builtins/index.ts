import type { NodeType } from '../types';
import { aiChat } from './ai-chat';
import { code } from './code';
import { httpRequest } from './http-request';
import { ifNode } from './if';
import { manualTrigger } from './manual-trigger';
import { merge } from './merge';
import { respondToWebhook } from './respond-to-webhook';
import { sandboxExec } from './sandbox-exec';
import { schedule } from './schedule';
import { setNode } from './set';
import { switchNode } from './switch';
import { wait } from './wait';
import { webhook } from './webhook';

export const BUILTIN_NODE_TYPES: readonly NodeType[] = [
  manualTrigger, webhook, schedule, httpRequest, code, ifNode, switchNode, setNode, merge, wait, respondToWebhook, sandboxExec, aiChat,
];

export { aiChat, code, httpRequest, ifNode, manualTrigger, merge, respondToWebhook, sandboxExec, schedule, setNode, switchNode, wait, webhook };
export { verifyWebhookAuth, webhookRoute } from './webhook';
export { runCode } from './code';
export { nextScheduleTime } from './schedule';
export { testCondition, OPERATORS } from './conditions';
