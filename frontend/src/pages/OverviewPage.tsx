// Overview: every cluster as a card, problems first, live.
import { useMemo } from "react";
import { Link } from "react-router";
import { useClusterStatuses } from "../hooks/useClusterStatuses";
import { useClusters } from "../hooks/useClusters";
import { useSeriesList, type SeriesParams } from "../hooks/useSeries";
import { useNow } from "../hooks/useNow";
import { buildClusterCard, sortCards } from "../viewmodels/overview";
import { ClusterCardView } from "../components/ClusterCard";
import { FiringBanner } from "../components/alerts/FiringBanner";
import { Empty, Loading, ProblemView } from "../components/States";

const SPARK_MS = 15 * 60_000;

export function OverviewPage() {
  const clusters = useClusters();
  const list = useMemo(() => clusters.data ?? [], [clusters.data]);
  const ids = useMemo(() => list.map((c) => c.id), [list]);
  const { statuses, topologies } = useClusterStatuses(ids);
  const sparkParams = useMemo<SeriesParams[]>(
    () =>
      list.map((c) => ({
        metric: "lag_s",
        instanceIds: c.instances.filter((i) => i.role === "replica").map((i) => i.id),
        window: { kind: "last", spanMs: SPARK_MS },
        points: 90,
      })),
    [list],
  );
  const sparks = useSeriesList(sparkParams, { intervalMs: 10_000 });
  const now = useNow(5000);

  if (clusters.isPending) return <Loading what="clusters" />;
  if (clusters.error) return <ProblemView error={clusters.error} what="clusters" />;
  if (list.length === 0) {
    return (
      <section className="page">
        <h1>Overview</h1>
        <Empty>
          No clusters yet. <Link to="/settings">Add one in Settings</Link>.
        </Empty>
      </section>
    );
  }

  const cards = sortCards(
    list.map((cluster, i) =>
      buildClusterCard(cluster, statuses[i]?.data, topologies[i]?.data, sparks[i]?.data, now),
    ),
  );
  return (
    <section className="page">
      <h1>Overview</h1>
      <FiringBanner />
      <div className="cards">
        {cards.map((card) => {
          const i = ids.indexOf(card.id);
          return (
            <ClusterCardView
              key={card.id}
              card={card}
              loading={statuses[i]?.isPending ?? false}
              error={statuses[i]?.error ?? null}
              sparkStart={now - SPARK_MS}
              sparkEnd={now}
            />
          );
        })}
      </div>
    </section>
  );
}
