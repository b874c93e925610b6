import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { keys } from "./keys";

/** How one may sign in here: password sign-in (on, break-glass only, off) and the single
 * sign-on provider's name, if any. Asked before signing in (no token needed). */
export function useAuthMethods() {
  return useQuery({
    queryKey: keys.authMethods(),
    queryFn: ({ signal }) => unwrap(api.GET("/api/v1/auth/methods", { signal })),
    retry: false,
    staleTime: Infinity,
  });
}
