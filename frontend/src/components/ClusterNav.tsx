import { NavLink } from "react-router";

/** The views of one cluster; the explorer's page can show it too (one line). */
export function ClusterNav({ clusterId }: { clusterId: number }) {
  const base = `/clusters/${clusterId}`;
  return (
    <nav className="cluster-nav" aria-label="Cluster views">
      <NavLink to={base} end>
        Explorer
      </NavLink>
      <NavLink to={`${base}/journal`}>Journal</NavLink>
      <NavLink to={`${base}/episodes`}>Episodes</NavLink>
      <NavLink to={`${base}/compare`}>Compare</NavLink>
      <NavLink to={`${base}/workers`}>Appliers</NavLink>
    </nav>
  );
}
