import type { SubgraphContext } from '../../core/context';
import type { IdentityLoaders } from './identity.loaders';

/** What every identity resolver receives. */
export type IdentityContext = SubgraphContext<IdentityLoaders>;
