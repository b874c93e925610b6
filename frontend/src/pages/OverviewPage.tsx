// Overview: every cluster as a card, problems first, live. A fleet (a hundred clusters) loads in
// three requests whatever its size: the fleet's status, its sparklines and the firing alerts.
// Filters (search, region, state, cause) live in the URL, so a reload or a shared link keeps them.
import { useMemo } from "react";
import { Link, useSearchParams } from "react-router";
import { useFiringAlerts } from "../hooks/useAlertEvents";
import { useFleetSparklines } from "../hooks/useFleetSparklines";
import { useFleetStatus } from "../hooks/useFleetStatus";
import { useNow } from "../hooks/useNow";
import {
  buildFleetCards,
  filterFleet,
  fleetOptions,
  fleetSearch,
  fleetSummary,
  isFiltered,
  parseFleetFilter,
  sortFleet,
  type FleetFilter,
} from "../viewmodels/fleet";
import { ClusterCardView } from "../components/ClusterCard";
import { FleetFilters } from "../components/FleetFilters";
import { FiringBanner } from "../components/alerts/FiringBanner";
import { Empty, Loading, ProblemView } from "../components/States";

const SPARK_MS = 15 * 60_000;

export function OverviewPage() {
  const fleet = useFleetStatus();
  const sparks = useFleetSparklines();
  const firing = useFiringAlerts();
  const now = useNow(5000);
  const [params, setParams] = useSearchParams();
  const filter = useMemo(() => parseFleetFilter(params), [params]);
  const cards = useMemo(
    () => sortFleet(buildFleetCards(fleet.data, sparks.data, firing.data, now)),
    [fleet.data, sparks.data, firing.data, now],
  );
  const shown = useMemo(() => filterFleet(cards, filter), [cards, filter]);
  const options = useMemo(() => fleetOptions(cards, filter), [cards, filter]);

  if (fleet.isPending) return <Loading what="clusters" />;
  if (fleet.error && !fleet.data) return <ProblemView error={fleet.error} what="clusters" />;
  if (cards.length === 0) {
    return (
      <section className="page">
        <h1>Overview</h1>
        <Empty>
          No clusters yet. <Link to="/settings">Add one in Settings</Link>.
        </Empty>
      </section>
    );
  }

  // From the URL as it is now (the router's updater gets the params this render saw): a second
  // change before the next render (two selects in a row) would otherwise put the first back.
  const onFilter = (patch: Partial<FleetFilter>) => {
    const current = new URLSearchParams(window.location.search);
    setParams(fleetSearch(current, { ...parseFleetFilter(current), ...patch }), { replace: true });
  };
  const sparkEnd = sparks.data?.end ?? now;
  const sparkStart = sparks.data?.start ?? sparkEnd - SPARK_MS;
  return (
    <section className="page overview">
      <h1>Overview</h1>
      <FiringBanner />
      <p className="muted fleet-summary" aria-label="Fleet summary">
        {cards.length} cluster{cards.length === 1 ? "" : "s"}: {fleetSummary(cards).join(" · ")}
      </p>
      <FleetFilters filter={filter} options={options} shown={shown.length} total={cards.length} onChange={onFilter} />
      {fleet.error ? <ProblemView error={fleet.error} what="the latest status" /> : null}
      {shown.length === 0 ? (
        <Empty>
          No cluster matches {isFiltered(filter) ? "these filters" : "this"}.{" "}
          <button type="button" className="link" onClick={() => onFilter({ q: "", region: "", state: "", cause: "" })}>
            Clear the filters
          </button>
        </Empty>
      ) : null}
      <div className="cards fleet-cards">
        {shown.map((card) => (
          <ClusterCardView
            key={card.id}
            card={card}
            loading={false}
            error={null}
            sparkStart={sparkStart}
            sparkEnd={sparkEnd}
            state={card.state}
            firing={card.firing}
            servers={card.servers}
          />
        ))}
      </div>
    </section>
  );
}
