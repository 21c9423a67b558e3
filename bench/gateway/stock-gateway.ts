/**
 * The baseline of bench/gateway: a stock @apollo/gateway in @apollo/server's standalone server,
 * configured as its documentation shows, forwarding the caller's envelope header to the
 * subgraph (the least a gateway in front of our subgraphs must do). No caching or tuning of ours.
 */
import { ApolloGateway, RemoteGraphQLDataSource } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { readFileSync } from 'node:fs';
import { SUPERGRAPH_PATH } from '../../gateway/compose';
import { ENVELOPE_HEADER } from '../../core/principal';

interface Context {
  envelope?: string;
}

async function main(): Promise<void> {
  const identityUrl = process.env.IDENTITY_SUBGRAPH_URL!;
  const gateway = new ApolloGateway({
    supergraphSdl: readFileSync(SUPERGRAPH_PATH, 'utf8'),
    buildService: ({ name, url }) =>
      new RemoteGraphQLDataSource<Context>({
        url: name === 'identity' ? identityUrl : url,
        willSendRequest({ request, context }) {
          if (context.envelope) request.http?.headers.set(ENVELOPE_HEADER, context.envelope);
        },
      }),
  });
  const server = new ApolloServer<Context>({ gateway });
  await startStandaloneServer(server, {
    listen: { port: Number(process.env.STOCK_PORT), host: '127.0.0.1' },
    context: async ({ req }) => ({ envelope: req.headers[ENVELOPE_HEADER] as string | undefined }),
  });
}

void main();
