import { composeServices } from '@apollo/composition';
import { printSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import path from 'node:path';
import { REPO_ROOT } from '../core/paths';
import { SUBGRAPH_NAMES, loadConfig, subgraphUrl } from '../core/config';
import { buildSubgraphSchemaOnly } from '../core/subgraph';
import { SUBGRAPHS } from '../subgraphs';

/** Where the committed supergraph lives; the gateway serves exactly this file. */
export const SUPERGRAPH_PATH = path.join(REPO_ROOT, 'gateway', 'supergraph.graphql');

/**
 * Composes the supergraph from every subgraph's schema with @apollo/composition. The routing
 * URLs written into it are the development defaults; the gateway overrides them from its
 * configuration, so the committed file does not depend on the machine.
 */
export async function composeSupergraph(): Promise<string> {
  const config = loadConfig({ NODE_ENV: 'development' });
  const services = [];
  for (const name of SUBGRAPH_NAMES) {
    const schema = await buildSubgraphSchemaOnly(SUBGRAPHS[name]);
    services.push({ name, url: subgraphUrl(config, name), typeDefs: parse(printSubgraphSchema(schema)) });
  }
  const result = composeServices(services);
  if (result.errors) {
    throw new Error(`Composition failed:\n${result.errors.map((e) => `  - ${e.message}`).join('\n')}`);
  }
  return `${result.supergraphSdl.trimEnd()}\n`;
}
