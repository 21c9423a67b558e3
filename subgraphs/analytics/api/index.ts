import type { AnalyticsDeps } from '../index';
import { AnalyticsFunnelResolver } from './funnels.resolver';
import { FunnelRepository } from './funnels.repository';
import { FunnelService } from './funnels.service';
import { AnalyticsInstallationResolver } from './installations.resolver';
import { InstallationRepository } from './installations.repository';
import { InstallationService } from './installations.service';
import { AnalyticsReportResolver } from './reports.resolver';
import { ReportRepository } from './reports.repository';
import { ReportService } from './reports.service';

/** The GraphQL side (hence REST): installations, funnels, dashboards and reports. */
export interface AnalyticsApi {
  installations: InstallationService;
  funnels: FunnelService;
  reports: ReportService;
  /** Resolver instances, in the order of ANALYTICS_RESOLVERS. */
  resolvers: object[];
}

/** Resolver classes (type-graphql) of the analytics subgraph. */
export const ANALYTICS_RESOLVERS = [AnalyticsInstallationResolver, AnalyticsFunnelResolver, AnalyticsReportResolver];

export function createAnalyticsApi(deps: AnalyticsDeps): AnalyticsApi {
  const installations = new InstallationService({
    installations: new InstallationRepository(deps.dataSource),
    publicUrl: deps.config.publicUrl,
    installationChanged: deps.installationChanged,
  });
  const funnels = new FunnelService(installations, new FunnelRepository(deps.dataSource));
  const reports = new ReportService(installations, new ReportRepository(deps.dataSource));
  return {
    installations,
    funnels,
    reports,
    resolvers: [new AnalyticsInstallationResolver(installations), new AnalyticsFunnelResolver(funnels), new AnalyticsReportResolver(reports)],
  };
}
