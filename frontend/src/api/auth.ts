// The login token, kept in localStorage so a reload or a second tab stays signed in. It is a
// bearer token (never a cookie), so other sites cannot make the browser send it.
const KEY = "lagscope.token";

export function readToken(): string | null {
  try {
    return window.localStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function storeToken(token: string): void {
  window.localStorage.setItem(KEY, token);
}

export function clearToken(): void {
  window.localStorage.removeItem(KEY);
}
