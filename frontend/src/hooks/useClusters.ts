import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { keys } from "./keys";

export function useClusters() {
  return useQuery({
    queryKey: keys.clusters(),
    queryFn: ({ signal }) => unwrap(api.GET("/api/v1/clusters", { signal })),
    staleTime: 30_000,
  });
}
