import { readFileSync } from 'node:fs';
import { SUPERGRAPH_PATH, composeSupergraph } from './compose';
import { subscriptionOwners } from './subscriptions';
import { parse } from 'graphql';

describe('supergraph', () => {
  it('is composed from the current subgraphs (run `npm run compose` when this fails)', async () => {
    const committed = readFileSync(SUPERGRAPH_PATH, 'utf8');
    const fresh = await composeSupergraph();
    expect(committed).toBe(fresh);
  });

  it('knows which subgraph owns each subscription field', () => {
    const owners = subscriptionOwners(parse(readFileSync(SUPERGRAPH_PATH, 'utf8')));
    expect(owners.get('workspaceMembershipChanged')).toBe('identity');
  });
});
