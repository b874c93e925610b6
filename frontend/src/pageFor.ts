// Which page a path opens, by the same patterns as the routes in App.tsx: the app starts loading
// that page's chunk at once, beside the session check.
export type PageName =
  | "overview"
  | "cluster"
  | "journal"
  | "episodes"
  | "episode"
  | "compare"
  | "workers"
  | "alerts"
  | "inbox"
  | "settings"
  | "login"
  | "notFound";

/** The page a path opens (the routes below, as patterns). */
export function pageFor(pathname: string): PageName {
  const path = pathname.replace(/\/+$/, "") || "/";
  if (path === "/") return "overview";
  if (path === "/login") return "login";
  if (path === "/alerts") return "alerts";
  if (path === "/inbox") return "inbox";
  if (path === "/settings" || path.startsWith("/settings/")) return "settings";
  const cluster = /^\/clusters\/[^/]+(?:\/(journal|episodes|compare|workers)(\/[^/]+)?)?$/.exec(path);
  if (cluster) {
    if (!cluster[1]) return "cluster";
    if (cluster[1] === "episodes") return cluster[2] ? "episode" : "episodes";
    if (!cluster[2]) return cluster[1] as "journal" | "compare" | "workers";
  }
  return "notFound";
}
