import { hashRecoveryCode, isRecoveryCodeFormat, newRecoveryCodes, RECOVERY_CODE_COUNT } from './recovery-code';
import { codeForStep, matchingStep, newTotpSecret, otpauthUrl, stepAt } from './totp-code';

/** RFC 6238 appendix B: the SHA1 seed "12345678901234567890", base32. */
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';

describe('TOTP codes', () => {
  it('matches the RFC 6238 SHA1 test vectors (last six digits)', () => {
    const vectors: Array<[number, string]> = [
      [59, '287082'],
      [1111111109, '081804'],
      [1111111111, '050471'],
      [1234567890, '005924'],
      [2000000000, '279037'],
    ];
    for (const [seconds, code] of vectors) expect(codeForStep(RFC_SECRET, stepAt(seconds * 1000))).toBe(code);
  });

  it('accepts the current step and the one before it, never a future step or two back', () => {
    const now = 1767225600_000 + 12_000;
    const step = stepAt(now);
    expect(matchingStep(RFC_SECRET, codeForStep(RFC_SECRET, step), now)).toBe(step);
    expect(matchingStep(RFC_SECRET, codeForStep(RFC_SECRET, step - 1), now)).toBe(step - 1);
    expect(matchingStep(RFC_SECRET, codeForStep(RFC_SECRET, step + 1), now)).toBeNull();
    expect(matchingStep(RFC_SECRET, codeForStep(RFC_SECRET, step - 2), now)).toBeNull();
    expect(matchingStep(RFC_SECRET, `${codeForStep(RFC_SECRET, step)}0`, now)).toBeNull();
    expect(matchingStep(RFC_SECRET, '', now)).toBeNull();
  });

  it('makes 160-bit secrets and standard otpauth URIs', () => {
    const secret = newTotpSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(newTotpSecret()).not.toBe(secret);
    const url = new URL(otpauthUrl('Workspace Platform', 'alice', secret));
    expect(url.protocol).toBe('otpauth:');
    expect(url.host).toBe('totp');
    expect(decodeURIComponent(url.pathname)).toBe('/Workspace Platform:alice');
    expect(Object.fromEntries(url.searchParams)).toEqual({ issuer: 'Workspace Platform', secret, algorithm: 'SHA1', digits: '6', period: '30' });
  });
});

describe('recovery codes', () => {
  it('are ten distinct xxxxx-xxxxx base32 codes', () => {
    const codes = newRecoveryCodes();
    expect(codes).toHaveLength(RECOVERY_CODE_COUNT);
    expect(new Set(codes).size).toBe(RECOVERY_CODE_COUNT);
    for (const code of codes) expect(code).toMatch(/^[a-z2-7]{5}-[a-z2-7]{5}$/);
  });

  it('hash alike whatever the case, hyphens or spaces, and differently per user', () => {
    const [code] = newRecoveryCodes(1);
    const hash = hashRecoveryCode('usr_a', code);
    expect(hashRecoveryCode('usr_a', code.toUpperCase().replace('-', ''))).toBe(hash);
    expect(hashRecoveryCode('usr_a', ` ${code.slice(0, 3)} ${code.slice(3)} `)).toBe(hash);
    expect(hashRecoveryCode('usr_b', code)).not.toBe(hash);
    expect(hash).not.toContain(code.replace('-', ''));
  });

  it('recognise the format loosely and refuse anything else', () => {
    expect(isRecoveryCodeFormat('ABCDE-FGH23')).toBe(true);
    expect(isRecoveryCodeFormat('abcdefgh23')).toBe(true);
    expect(isRecoveryCodeFormat('abcde-fgh2')).toBe(false);
    expect(isRecoveryCodeFormat('abcde-fgh01')).toBe(false);
    expect(isRecoveryCodeFormat('')).toBe(false);
  });
});
