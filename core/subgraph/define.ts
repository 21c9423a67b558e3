import type { IResolvers } from '@graphql-tools/utils';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { NonEmptyArray } from 'type-graphql';
import type { DataSource, MixedList, EntitySchema } from 'typeorm';
import { subgraphUrl, type PlatformConfig, type SubgraphName } from '../config';
import type { SubgraphContext } from '../context';
import type { Logger } from '../logger';
import type { PlatformPubSub } from '../pubsub';
import type { Redis } from '../redis';
import type { Envelope } from '../principal';

/** What a process shares among the services it runs. */
export interface PlatformRuntime {
  config: PlatformConfig;
  /** Resolved connection strings (the launcher may have started embedded ones). */
  databaseUrl: string;
  redisUrl: string;
  pubsub: PlatformPubSub;
  logger: Logger;
  /** Receives every SQL statement of every subgraph; tests count queries with it. */
  onQuery?: (subgraph: SubgraphName, sql: string) => void;
  /**
   * URLs (…/graphql) of the subgraphs this process runs, filled in as each starts; a subgraph
   * calling another's internal API looks here first, then at the configuration (`serviceUrl`).
   */
  serviceUrls?: Partial<Record<SubgraphName, string>>;
}

/** Base URL (without /graphql) of a subgraph's HTTP API, as this process can reach it. */
export function serviceBaseUrl(runtime: PlatformRuntime, name: SubgraphName): string {
  return (runtime.serviceUrls?.[name] ?? subgraphUrl(runtime.config, name)).replace(/\/graphql$/, '');
}

/** What a subgraph's services are built from. */
export interface SubgraphDeps {
  runtime: PlatformRuntime;
  config: PlatformConfig;
  dataSource: DataSource;
  redis: Redis;
  pubsub: PlatformPubSub;
  logger: Logger;
}

/**
 * A handler of a subgraph's internal HTTP API (`/internal/...`), called by the gateway and workers.
 * `signal` aborts when the caller goes away before the answer (a cancelled workflow step): work
 * done for it alone (a vendor call) should stop.
 */
export type InternalRoute = (input: { body: unknown; envelope: Envelope; req: IncomingMessage; signal: AbortSignal }) => Promise<unknown>;

/**
 * Raw HTTP served by a subgraph under one path prefix, beside GraphQL (a byte-level proxy, for
 * example). The envelope is verified from the gateway's header when one is present, else null:
 * the handler decides what an unsigned request may do (the gateway always signs one).
 */
export interface RawHttpRoutes {
  /** Path prefix the routes own, with a trailing slash (`/proxy/`). */
  prefix: string;
  /** Serves a request whose path starts with `prefix`; a thrown DomainError gets the platform error shape. */
  handle(req: IncomingMessage, res: ServerResponse, envelope: Envelope | null): Promise<void>;
  /** Takes over an HTTP upgrade whose path starts with `prefix` (without it, such upgrades are refused). */
  upgrade?(req: IncomingMessage, socket: Duplex, head: Buffer, envelope: Envelope | null): void;
  /** Runs on stop, before the server closes (end upgraded connections, pooled sockets). */
  close?(): Promise<void> | void;
}

/**
 * Everything that makes a domain a subgraph. Every `subgraphs/<domain>/index.ts` exports one
 * of these, so composition, the launcher and the tests treat all domains alike.
 */
export interface SubgraphDefinition<S = unknown, L = Record<string, unknown>> {
  name: SubgraphName;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  resolvers: NonEmptyArray<Function>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  orphanedTypes?: Function[];
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities: MixedList<Function | string | EntitySchema>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: MixedList<Function | string>;
  /** Builds the domain's services once per process. */
  createServices(deps: SubgraphDeps): S;
  /** One instance per resolver class, constructed with the services (type-graphql's container). */
  createResolvers(services: S): object[];
  /** Per-request DataLoaders. */
  createLoaders?(services: S): L;
  /** `__resolveReference` and other resolvers type-graphql cannot express. */
  referenceResolvers?: IResolvers<unknown, SubgraphContext<L>>;
  /** `POST /internal/<name>` handlers. */
  internalRoutes?(services: S): Record<string, InternalRoute>;
  /** Raw HTTP (and HTTP upgrades) under a path prefix, outside GraphQL and the internal API. */
  rawHttp?(services: S): RawHttpRoutes;
  /** Runs after migrations, before the server listens (first-boot data, for example). */
  onStart?(services: S, deps: SubgraphDeps): Promise<void>;
  /** Runs on stop, before the database closes. */
  onStop?(services: S): Promise<void>;
}

export function defineSubgraph<S, L extends Record<string, unknown> = Record<string, unknown>>(definition: SubgraphDefinition<S, L>): SubgraphDefinition<S, L> {
  return definition;
}
