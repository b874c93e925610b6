// API problems in words a person acts on.
import { ApiProblem } from "../api/client";
import { formatDuration } from "./format";

/** A refused change of your own password: a wrong current one (403), or too many (429). */
export function passwordErrorText(error: unknown): string {
  if (error instanceof ApiProblem) {
    if (error.status === 403) return "That is not your current password.";
    if (error.status === 429) {
      const wait =
        error.retryAfterS !== null ? ` Try again in ${formatDuration(error.retryAfterS)}.` : " Try again later.";
      return `Too many wrong passwords from this address.${wait}`;
    }
  }
  return loginErrorText(error);
}

export function loginErrorText(error: unknown): string {
  if (error instanceof ApiProblem) {
    if (error.status === 401) return "Wrong username or password.";
    if (error.status === 429) {
      const wait =
        error.retryAfterS !== null ? ` Try again in ${formatDuration(error.retryAfterS)}.` : " Try again later.";
      return `Too many failed logins for this user or address.${wait}`;
    }
    if (error.status === 422) return `Invalid input: ${error.detail || error.title}`;
    if (error.status === 0) return `The API did not answer${error.detail ? `: ${error.detail}` : "."}`;
    return error.detail ? `${error.title}: ${error.detail}` : error.title;
  }
  return "The API did not answer.";
}

/** Single sign-on that did not end signed in: the API's own sentence says why (no group that
 * gives a role, a disabled account, an expired sign-in, the provider's refusal). */
export function ssoErrorText(error: unknown): string {
  if (error instanceof ApiProblem && (error.status === 401 || error.status === 403) && error.detail) {
    return `Single sign-on failed: ${error.detail}`;
  }
  return loginErrorText(error);
}
