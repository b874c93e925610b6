import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { keys } from "./keys";

/** One episode with its cause timeline; an ongoing one refreshes (GET /episodes/{id}). */
export function useEpisode(episodeId: number, intervalMs = 5000) {
  return useQuery({
    enabled: Number.isInteger(episodeId) && episodeId > 0,
    queryKey: keys.episode(episodeId),
    queryFn: ({ signal }) =>
      unwrap(api.GET("/api/v1/episodes/{episode_id}", { params: { path: { episode_id: episodeId } }, signal })),
    refetchInterval: (query) => (query.state.data && query.state.data.ended_at !== null ? false : intervalMs),
    refetchIntervalInBackground: false,
  });
}
