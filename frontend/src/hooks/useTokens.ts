import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap, type Schemas } from "../api/client";
import { keys } from "./keys";

/** Your API and login tokens (an admin: everyone's). */
export function useTokens(enabled = true) {
  return useQuery({
    queryKey: keys.tokens(),
    queryFn: ({ signal }) => unwrap(api.GET("/api/v1/auth/tokens", { signal })),
    enabled,
  });
}

export function useCreateToken() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: Schemas["TokenIn"]) => unwrap(api.POST("/api/v1/auth/tokens", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.tokens() }),
  });
}

export function useRevokeToken() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.DELETE("/api/v1/auth/tokens/{token_id}", { params: { path: { token_id: id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.tokens() }),
  });
}
