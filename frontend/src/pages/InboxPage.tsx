// The demo's webhook inbox: the alerts Lagscope delivered to its own loopback receiver (the demo's
// lag rule sends there), each with the headers a receiver checks and the payload as JSON text.
// Demo mode only: the route shows a note elsewhere, and the nav links here only in the demo.
import { Link } from "react-router";
import { Empty, Loading, ProblemView } from "../components/States";
import { formatDateTime } from "../format/format";
import { useDemoInbox } from "../hooks/useDemoInbox";
import { useMe } from "../hooks/useMe";
import { inboxItems, type InboxEpisode, type InboxItem } from "../viewmodels/inbox";

export function InboxPage() {
  const me = useMe();
  const demo = me.data?.demo === true;
  const inbox = useDemoInbox(demo);

  if (me.isPending) return <Loading what="the session" />;
  if (!demo) {
    return (
      <section className="page">
        <h1>Webhook inbox</h1>
        <Empty>The inbox exists in the demo only (`make demo`). Here, alerts go to the webhook targets on the <Link to="/alerts">Alerts</Link> page.</Empty>
      </section>
    );
  }
  const items = inboxItems(inbox.data?.entries ?? []);
  // The payload a newcomer came for: the newest firing one (a resolved one may be newer).
  const shown = items.find((item) => item.status === "firing") ?? items[0];
  return (
    <section className="page inbox-page">
      <header className="page-head">
        <h1>Webhook inbox</h1>
        <span className="muted small">
          The demo's alert rule (as shipped: lag over 30 s for 30 s, on every replica) sends to this built-in receiver; it keeps the newest{" "}
          {inbox.data?.capacity ?? 200}. Edit the rule or add your own targets on the <Link to="/alerts">Alerts</Link> page.
        </span>
      </header>
      {inbox.error ? <ProblemView error={inbox.error} what="the inbox" /> : null}
      {inbox.isPending ? <Loading what="the inbox" /> : null}
      {inbox.data && items.length === 0 ? (
        <Empty>Nothing received yet: an alert arrives here about 30 s after a replica's lag passes 30 s (in the tuning story, during phase A or B).</Empty>
      ) : null}
      <ol className="inbox" aria-label="Received alerts">
        {items.map((item) => (
          <InboxCard key={item.id} item={item} open={item === shown} />
        ))}
      </ol>
    </section>
  );
}

/** One payload is open at first: 200 open payloads make a page nobody scrolls. */
function InboxCard({ item, open }: { item: InboxItem; open: boolean }) {
  return (
    <li className={`panel inbox-entry inbox-${item.status === "firing" ? "firing" : "other"}`}>
      <div className="inbox-head">
        <span className={`badge${item.status === "firing" ? " tone-warn" : ""}`}>{item.status}</span>
        <strong>{item.rule ?? "webhook"}</strong>
        <span className="muted small">
          {formatDateTime(item.receivedMs)}
          {item.times > 1 ? ` · received ${item.times} times (same Idempotency-Key), last ${formatDateTime(item.lastReceivedMs)}` : ""}
        </span>
      </div>
      {item.episode ? <InboxEpisodeView episode={item.episode} /> : null}
      {item.summary ? <p className="inbox-summary">{item.summary}</p> : null}
      {item.state ? (
        <p className="inbox-state small">
          <span className="muted">Now: </span>
          {item.state}
        </p>
      ) : null}
      {item.why.length ? (
        <div className="inbox-why">
          <strong className="small">{item.episode ? "Why, at the last poll:" : "Why:"}</strong>
          <ul>
            {item.why.map((why, i) => (
              <li key={i}>
                {why.words ? <strong className="inbox-why-words">{why.words}</strong> : null}
                {why.words && why.sentence ? ": " : null}
                {why.sentence}
                {why.action ? (
                  <div className="inbox-why-action">
                    <span className="muted">What to do: </span>
                    {why.action}
                  </div>
                ) : null}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      <table className="inbox-headers small">
        <caption className="muted">Headers · {item.signature}</caption>
        <tbody>
          {item.headers.map(([name, value]) => (
            <tr key={name}>
              <th scope="row">{name}</th>
              <td>
                <code>{value}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <details open={open}>
        <summary>Payload (JSON)</summary>
        <pre className="inbox-payload">{item.json}</pre>
      </details>
    </li>
  );
}

/** The episode's main cause first, then its evidence, then what to do (as the episode page reads). */
function InboxEpisodeView({ episode }: { episode: InboxEpisode }) {
  return (
    <div className="inbox-episode" aria-label="The episode's main cause">
      <strong className="small">Episode's main cause: </strong>
      <strong className="inbox-episode-cause">{episode.words ?? "not named yet"}</strong>
      {episode.href ? (
        <>
          {" · "}
          <Link to={episode.href}>open the episode</Link>
        </>
      ) : null}
      {episode.sentence ? <div className="inbox-episode-evidence">{episode.sentence}</div> : null}
      {episode.action ? (
        <div className="inbox-why-action">
          <span className="muted">What to do: </span>
          {episode.action}
        </div>
      ) : null}
    </div>
  );
}
