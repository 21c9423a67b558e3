import { openCredential, sealCredential } from '../model/shared';

/**
 * Upstream credentials in and out of their sealed form (`model/shared.ts`). The management API
 * opens a credential only to compute its hint and for the live test; neither the plaintext nor
 * the ciphertext leaves this class in an answer or a log line.
 */
export class CredentialVault {
  constructor(private readonly encryptionKey: Buffer) {}

  seal(upstreamId: string, value: string, kind: 'credential' | 'refresh_token' = 'credential'): string {
    return sealCredential(this.encryptionKey, upstreamId, value, kind);
  }

  open(upstreamId: string, ciphertext: string, kind: 'credential' | 'refresh_token' = 'credential'): string {
    return openCredential(this.encryptionKey, upstreamId, ciphertext, kind);
  }

  /** `…` and the last four characters; only `…` for a credential too short to show any of it, or one that no longer opens. */
  hint(upstreamId: string, ciphertext: string | undefined): string {
    if (!ciphertext) return '…';
    try {
      return credentialHint(this.open(upstreamId, ciphertext));
    } catch {
      return '…';
    }
  }
}

export function credentialHint(value: string): string {
  return value.length >= 8 ? `…${value.slice(-4)}` : '…';
}
