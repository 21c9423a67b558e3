import { requireWorkspaceRole, selectWorkspaceId } from '../../../core/access';
import type { RequestContext } from '../../../core/context';
import { NotFoundError } from '../../../core/errors';
import { pageResult, toPage, type PageResult } from '../../../core/pagination';
import type { ConversationRepository } from './conversations.repository';
import type { AiConversation, AiConversationSummary, ListAiConversationsArgs } from './conversations.types';
import { toAiConversation, toAiConversationSummary } from './mapper';
import { optionalId } from './validation';

/** Stored conversations (requests whose key or pool opts in). Viewer role; another workspace's is 404. */
export class ConversationService {
  constructor(private readonly conversations: ConversationRepository) {}

  async list(ctx: RequestContext, args: ListAiConversationsArgs): Promise<PageResult<AiConversationSummary>> {
    const workspaceId = selectWorkspaceId(ctx, args.workspaceId);
    requireWorkspaceRole(ctx, workspaceId, 'viewer');
    const page = toPage(args);
    const [rows, total] = await this.conversations.listByWorkspace(workspaceId, page, { keyId: optionalId(args.keyId) });
    return pageResult(rows.map(toAiConversationSummary), total, page);
  }

  async get(ctx: RequestContext, requestId: string): Promise<AiConversation> {
    // Request ids are printable ASCII; anything else (a NUL the database would refuse) is simply not found.
    const row = /^[\x21-\x7e]{1,200}$/.test(requestId) ? await this.conversations.findByRequestId(requestId) : null;
    if (!row || !ctx.principal?.memberships[row.workspaceId]) throw new NotFoundError('Conversation', requestId.slice(0, 200));
    requireWorkspaceRole(ctx, row.workspaceId, 'viewer');
    const usage = await this.conversations.usageOf(row.requestId);
    // A usage row of another workspace under the same id would be a proxy bug; never show it.
    return toAiConversation(row, usage && usage.workspaceId === row.workspaceId ? usage : null);
  }
}
