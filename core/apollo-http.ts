import { HeaderMap, type ApolloServer, type BaseContext } from '@apollo/server';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Apollo Server on a plain Node HTTP server (our integration; Apollo 5 ships none for bare
 * `node:http`): the request, its already-read JSON body and the context go in, Apollo's status,
 * headers and body (complete or incremental) come out on `res`.
 */
export async function serveApolloRequest<C extends BaseContext>(
  apollo: ApolloServer<C>,
  req: IncomingMessage,
  res: ServerResponse,
  input: { body: unknown; search: string; context: C },
): Promise<void> {
  const headers = new HeaderMap();
  for (const [key, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
  }
  const response = await apollo.executeHTTPGraphQLRequest({
    httpGraphQLRequest: { method: req.method ?? 'GET', headers, search: input.search, body: input.body },
    context: async () => input.context,
  });
  for (const [key, value] of response.headers) res.setHeader(key, value);
  res.statusCode = response.status ?? 200;
  if (response.body.kind === 'complete') {
    res.end(response.body.string);
    return;
  }
  for await (const chunk of response.body.asyncIterator) res.write(chunk);
  res.end();
}
