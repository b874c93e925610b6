// Changing your own password: the request body, built only from a complete, consistent form.
import type { Schemas } from "../api/client";

/** The API's minimum (security/users.py MIN_PASSWORD). */
export const MIN_PASSWORD = 10;

export type PasswordChange =
  | { body: Schemas["UserPatch"]; error: null }
  | { body: null; error: string };

/** The PATCH /users/{id} body for a self-service change: the API needs `current_password`,
 * so that a token alone (a script's, a browser left open) cannot take the account. */
export function passwordChangeBody(current: string, next: string, repeat: string): PasswordChange {
  if (current === "") return { body: null, error: "Type your current password." };
  if (next.length < MIN_PASSWORD) {
    return { body: null, error: `The new password needs at least ${MIN_PASSWORD} characters.` };
  }
  if (next !== repeat) return { body: null, error: "The two new passwords differ." };
  if (next === current) return { body: null, error: "The new password is the current one." };
  return { body: { password: next, current_password: current }, error: null };
}
