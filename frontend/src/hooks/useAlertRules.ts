import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap, type Schemas } from "../api/client";
import { keys } from "./keys";

export function useAlertRules() {
  return useQuery({
    queryKey: keys.alertRules(),
    queryFn: ({ signal }) => unwrap(api.GET("/api/v1/alerts/rules", { signal })),
  });
}

export function useCreateAlertRule() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: Schemas["RuleIn"]) => unwrap(api.POST("/api/v1/alerts/rules", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.alerts() }),
  });
}

export function useDeleteAlertRule() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.DELETE("/api/v1/alerts/rules/{rule_id}", { params: { path: { rule_id: id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.alerts() }),
  });
}

/** "Would have fired at …" over the last 24 h, for a rule not saved yet. */
export function usePreviewAlertRule() {
  return useMutation({
    mutationFn: (body: Schemas["RuleIn"]) => unwrap(api.POST("/api/v1/alerts/rules/preview", { body })),
  });
}

export function useUpdateAlertRule() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: number; body: Schemas["RulePatch"] }) =>
      unwrap(api.PATCH("/api/v1/alerts/rules/{rule_id}", { params: { path: { rule_id: id } }, body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.alerts() }),
  });
}

/** "Would have fired at …" over the last 24 h, for a saved rule with unsaved changes. */
export function usePreviewEditedAlertRule() {
  return useMutation({
    mutationFn: ({ id, body }: { id: number; body: Schemas["RulePatch"] }) =>
      unwrap(api.POST("/api/v1/alerts/rules/{rule_id}/preview", { params: { path: { rule_id: id } }, body })),
  });
}
