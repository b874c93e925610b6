import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";

export interface AuditFilter {
  actor?: string;
  kind?: string;
  action?: "create" | "update" | "delete";
  before_id?: number;
}

/** The audit trail, newest first, one page (admins only: others are not asked). */
export function useAudit(filter: AuditFilter, enabled: boolean) {
  return useQuery({
    queryKey: ["audit", filter] as const,
    queryFn: ({ signal }) =>
      unwrap(api.GET("/api/v1/audit", { params: { query: { ...filter, limit: 100 } }, signal })),
    enabled,
  });
}
