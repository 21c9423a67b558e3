import { CreateAnalytics1768262400000 } from './migrations/1768262400000-create-analytics';
import { AnalyticsUserEntity, FunnelEntity, InstallationEntity } from './model/entities';

export const ANALYTICS_ENTITIES = [InstallationEntity, FunnelEntity, AnalyticsUserEntity];
export const ANALYTICS_MIGRATIONS = [CreateAnalytics1768262400000];
