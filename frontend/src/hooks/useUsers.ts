import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { clearToken } from "../api/auth";
import { api, unwrap, type Schemas } from "../api/client";
import { keys } from "./keys";

export function useUsers(enabled: boolean) {
  return useQuery({
    queryKey: keys.users(),
    queryFn: ({ signal }) => unwrap(api.GET("/api/v1/users", { signal })),
    enabled,
  });
}

function useRefresh() {
  const queryClient = useQueryClient();
  return () => Promise.all([
    queryClient.invalidateQueries({ queryKey: keys.users() }),
    queryClient.invalidateQueries({ queryKey: keys.tokens() }),
  ]);
}

export function useCreateUser() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: (body: Schemas["UserIn"]) => unwrap(api.POST("/api/v1/users", { body })),
    onSuccess: refresh,
  });
}

export function useUpdateUser() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: ({ id, body }: { id: number; body: Schemas["UserPatch"] }) =>
      unwrap(api.PATCH("/api/v1/users/{user_id}", { params: { path: { user_id: id } }, body })),
    onSuccess: refresh,
  });
}

/** Your own password, with the current one. Success revokes every token you hold, this
 * browser's too: the token and everything cached are dropped, as at a logout. */
export function useChangeOwnPassword() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: number; body: Schemas["UserPatch"] }) =>
      unwrap(api.PATCH("/api/v1/users/{user_id}", { params: { path: { user_id: id } }, body })),
    onSuccess: () => {
      clearToken();
      queryClient.clear();
    },
  });
}

export function useDeleteUser() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: (id: number) => unwrap(api.DELETE("/api/v1/users/{user_id}", { params: { path: { user_id: id } } })),
    onSuccess: refresh,
  });
}
