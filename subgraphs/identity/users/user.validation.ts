import { ValidationError } from '../../../core/errors';

const USERNAME = /^[a-zA-Z0-9._-]{3,64}$/;

export function validateUsername(username: string): string {
  if (typeof username !== 'string' || !USERNAME.test(username)) {
    throw new ValidationError('username must be 3 to 64 characters of letters, digits, ".", "_" or "-"', { field: 'username' });
  }
  return username;
}

export function validatePassword(password: string): string {
  if (typeof password !== 'string' || password.length < 8 || password.length > 256) {
    throw new ValidationError('password must be 8 to 256 characters', { field: 'password' });
  }
  return password;
}
