import { ArgsType, Field, Int, ObjectType } from 'type-graphql';
import type { ClassType } from 'type-graphql';
import { ValidationError } from './errors';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/** `page` (1-based) and `limit` (default 20, at most 100), as every list takes them. */
@ArgsType()
export class PageArgs {
  @Field(() => Int, { nullable: true, description: '1-based page number. Default 1.' })
  page?: number;

  @Field(() => Int, { nullable: true, description: `Items per page. Default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}.` })
  limit?: number;
}

export interface Page {
  page: number;
  limit: number;
  offset: number;
}

export function toPage(args: { page?: number | null; limit?: number | null }): Page {
  const page = args.page ?? 1;
  const limit = args.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(page) || page < 1) throw new ValidationError('page must be an integer of at least 1', { field: 'page' });
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new ValidationError(`limit must be an integer between 1 and ${MAX_LIMIT}`, { field: 'limit' });
  }
  return { page, limit, offset: (page - 1) * limit };
}

export interface PageResult<T> {
  data: T[];
  total: number;
  page: number;
  limit: number;
}

export function pageResult<T>(data: T[], total: number, page: Page): PageResult<T> {
  return { data, total, page: page.page, limit: page.limit };
}

/**
 * The list shape `{ data, total, page, limit }` as a GraphQL object type, one per item type:
 * `@ObjectType() class SecretList extends PaginatedList(Secret) {}`.
 */
export function PaginatedList<T extends object>(itemClass: ClassType<T>) {
  @ObjectType()
  abstract class PaginatedListClass {
    @Field(() => [itemClass])
    data: T[];

    @Field(() => Int)
    total: number;

    @Field(() => Int)
    page: number;

    @Field(() => Int)
    limit: number;
  }
  return PaginatedListClass;
}
