import { writeFileSync } from 'node:fs';
import 'reflect-metadata';
import { SUPERGRAPH_PATH, composeSupergraph } from '../gateway/compose';

/** `npm run compose`: regenerates gateway/supergraph.graphql from the subgraphs' schemas. */
composeSupergraph()
  .then((sdl) => {
    writeFileSync(SUPERGRAPH_PATH, sdl);
    console.log(`Wrote ${SUPERGRAPH_PATH} (${sdl.length} bytes)`);
  })
  .catch((err: unknown) => {
    console.error((err as Error).message);
    process.exit(1);
  });
