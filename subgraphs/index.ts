import type { SubgraphName } from '../core/config';
import type { SubgraphDefinition } from '../core/subgraph';
import { identitySubgraph } from './identity';
import { computeSubgraph } from './compute';
import { sessionsSubgraph } from './sessions';
import { workflowsSubgraph } from './workflows';
import { aiSubgraph } from './ai';
import { billingSubgraph } from './billing';
import { analyticsSubgraph } from './analytics';

/** Every subgraph of the graph, by name. Composition, the launcher and the tests read this. */
export const SUBGRAPHS: Record<SubgraphName, SubgraphDefinition<any, any>> = {
  identity: identitySubgraph,
  compute: computeSubgraph,
  sessions: sessionsSubgraph,
  workflows: workflowsSubgraph,
  ai: aiSubgraph,
  billing: billingSubgraph,
  analytics: analyticsSubgraph,
};
