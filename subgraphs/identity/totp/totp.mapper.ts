import type { UserTotpEntity } from './user-totp.entity';
import type { TotpStatus } from './totp.types';

/** The one place an enrolment becomes the API's TotpStatus; secrets never leave. */
export function toTotpStatus(row: UserTotpEntity | null, recoveryCodesRemaining: number): TotpStatus {
  const enabledAt = row?.enabledAt ?? null;
  return { enabled: enabledAt !== null, enabledAt: enabledAt ? enabledAt.toISOString() : null, recoveryCodesRemaining: enabledAt ? recoveryCodesRemaining : 0 };
}
