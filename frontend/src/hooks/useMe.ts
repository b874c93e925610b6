import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { keys } from "./keys";

/** Who is signed in (in demo mode: the demo admin, without a token). 401 = nobody. */
export function useMe() {
  return useQuery({
    queryKey: keys.me(),
    queryFn: ({ signal }) => unwrap(api.GET("/api/v1/auth/me", { signal })),
    retry: false,
    staleTime: 60_000,
  });
}
