import type { FunnelEntity, InstallationEntity } from '../model/entities';
import type { AnalyticsFunnel } from './funnels.types';
import type { AnalyticsInstallation } from './installations.types';
import type { EventRow, UserRow } from './reports.repository';
import type { AnalyticsEvent, AnalyticsUser } from './reports.types';

/** Rows of the analytics domain to their API shapes; nothing else builds these. */

const iso = (d: Date | string): string => new Date(d).toISOString();

export function toInstallation(row: InstallationEntity): AnalyticsInstallation {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    name: row.name,
    domains: row.domains,
    publicKey: row.publicKey,
    hidden: row.hidden,
    createdByUserId: row.createdByUserId,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

export function toFunnel(row: FunnelEntity): AnalyticsFunnel {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    installationId: row.installationId,
    name: row.name,
    steps: row.steps.map((s) => ({ type: s.type, match: s.match, label: s.label ?? s.match })),
    windowSeconds: row.windowSeconds,
    createdByUserId: row.createdByUserId,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

export function toEvent(row: EventRow): AnalyticsEvent {
  return {
    eventId: row.event_id,
    at: iso(row.ts),
    kind: row.kind,
    name: row.name,
    visitorId: String(row.visitor_id),
    sessionId: String(row.session_id),
    userId: row.user_id,
    hostname: row.hostname,
    path: row.path,
    query: row.query,
    referrer: row.referrer,
    referrerDomain: row.referrer_domain,
    utmSource: row.utm_source,
    utmMedium: row.utm_medium,
    utmCampaign: row.utm_campaign,
    browser: row.browser,
    os: row.os,
    device: row.device,
    screenWidth: row.screen_width,
    props: row.props,
  };
}

export function toUser(row: UserRow): AnalyticsUser {
  return { userId: row.user_id, traits: row.traits ?? {}, firstSeenAt: iso(row.first_seen_at), lastSeenAt: iso(row.last_seen_at), events: Number(row.events ?? 0) };
}
