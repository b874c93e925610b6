import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap, type Schemas } from "../api/client";
import { keys } from "./keys";

export function useSilences() {
  return useQuery({
    queryKey: keys.silences(),
    queryFn: ({ signal }) => unwrap(api.GET("/api/v1/alerts/silences", { signal })),
  });
}

export function useCreateSilence() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: Schemas["SilenceIn"]) => unwrap(api.POST("/api/v1/alerts/silences", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.silences() }),
  });
}

export function useExpireSilence() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.DELETE("/api/v1/alerts/silences/{silence_id}", { params: { path: { silence_id: id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.silences() }),
  });
}
