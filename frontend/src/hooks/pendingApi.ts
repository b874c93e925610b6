// GET for the issue 19 endpoints the generated schema does not have yet (CONTRACT19.md section
// 4), through the same client (auth, 401 handling) and unwrap. Delete this file once `make client`
// has them: each hook then calls api.GET with its typed path.
import { api, unwrap } from "../api/client";

interface LooseInit {
  params?: { path?: Record<string, number>; query?: Record<string, string | number | undefined> };
  signal?: AbortSignal;
}
type LooseGet = (path: string, init: LooseInit) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

export function getPending<T>(path: string, init: LooseInit): Promise<T> {
  const get = api.GET as unknown as LooseGet;
  return unwrap(get.call(api, path, init)) as Promise<T>;
}
