"""Errant transactions: GTIDs a replica executed that its source never wrote.

Pure. A replica holding them cannot safely become the source: its replicas would ask for GTIDs
nobody else has, or fetch them and diverge. The rule differs per product:

- MySQL: the replica's ``Executed_Gtid_Set`` minus the source's ``@@gtid_executed``, an exact
  set. GTIDs of the source's own ``server_uuid`` are left out: the replica may be read a moment
  after the source, and the source's newest transactions then look like the replica's own.
- MariaDB: positions, not sets, so the rule is per replication domain. The replica's
  ``@@gtid_current_pos`` differs from its ``@@gtid_slave_pos`` in a domain exactly when the
  replica itself wrote the newest GTID there (its own server_id, a higher seq_no than it
  applied); that GTID is errant unless the source's ``@@gtid_binlog_pos`` ends with that very
  GTID. A domain where ``@@gtid_slave_pos`` is ahead of the source, written by a server other
  than the source, is errant too (GTIDs applied from a former source). Counts are seq_no
  differences: exact under ``gtid_strict_mode``, an estimate otherwise. Once the replica applies
  past a local write in the same domain (possible only with strict mode off), the positions no
  longer show it.
"""

from __future__ import annotations

from dataclasses import dataclass

from lagscope.analysis.server_text import clean_text
from lagscope.collectors.gtid import Gtid, GtidPos, GtidSet, GtidTexts

# The longest GTID set kept and shown; a replica with thousands of stray ranges is rare, and the
# count says how many there are.
MAX_TEXT = 1024


@dataclass(frozen=True, slots=True)
class Errant:
    """How many errant transactions, and which (server text, cleaned and capped)."""

    count: int
    gtids: str


NONE = Errant(0, "")


def mysql_errant(source_executed: GtidSet, executed: GtidSet, source_uuid: str | None) -> Errant:
    mine = source_uuid.lower() if source_uuid else None
    theirs = source_executed.as_dict()
    # A replica's set is mostly the source's, entry for entry: subtract only the entries that
    # differ, since a full difference rebuilds (and re-checks) every interval of a large set.
    differing = [
        (sid, ivs)
        for sid, ivs in executed
        if sid.split(":")[0] != mine and ivs != theirs.get(sid, ())
    ]
    if not differing:
        return NONE
    stray = GtidSet(tuple(differing)) - GtidSet(
        tuple((sid, theirs.get(sid, ())) for sid, _ in differing)
    )
    return Errant(stray.count(), _capped(str(stray)))


def mariadb_errant(
    source_binlog_pos: GtidPos,
    slave_pos: GtidPos,
    current_pos: GtidPos,
    source_server_id: int | None,
) -> Errant:
    found: list[tuple[Gtid, int]] = []
    for domain in sorted(set(slave_pos.domains()) | set(current_pos.domains())):
        applied, current = slave_pos.get(domain), current_pos.get(domain)
        on_source = source_binlog_pos.get(domain)
        if current is not None and current != applied and current != on_source:
            found.append((current, current.seq_no - (applied.seq_no if applied else 0)))
        elif (
            applied is not None
            and on_source is not None
            and applied.seq_no > on_source.seq_no
            and applied.server_id not in (on_source.server_id, source_server_id)
        ):
            found.append((applied, applied.seq_no - on_source.seq_no))
    return Errant(
        sum(max(1, n) for _, n in found), _capped(",".join(str(gtid) for gtid, _ in found))
    )


def errant_transactions(
    kind: str,
    texts: GtidTexts,
    source_executed: str,
    executed: str,
    *,
    source_uuid: str | None = None,
    source_server_id: int | None = None,
    slave_pos: str | None = None,
    current_pos: str | None = None,
    source_texts: GtidTexts | None = None,
) -> Errant | None:
    """The replica's errant transactions against its source; None when the server texts do not
    parse or a MariaDB replica's positions were not read. ``texts`` parses the replica's texts,
    ``source_texts`` (when given) the source's, so each is parsed once per tick."""
    on_source = source_texts or texts
    try:
        if kind == "mariadb":
            if slave_pos is None or current_pos is None:
                return None
            return mariadb_errant(
                on_source.gtid_pos(source_executed),
                texts.gtid_pos(slave_pos),
                texts.gtid_pos(current_pos),
                source_server_id,
            )
        return mysql_errant(
            on_source.gtid_set(source_executed), texts.gtid_set(executed), source_uuid
        )
    except ValueError:
        return None


def errant_problem(replica: str, product: str | None, count: int, gtids: str) -> str | None:
    """What an operator reads about them, with what to do; None when there are none."""
    if count <= 0:
        return None
    many = "transaction" if count == 1 else "transactions"
    shown = clean_text(gtids) or "GTIDs not kept"
    if product == "mariadb":
        return (
            f"{replica} has {count} {many} the source never wrote: up to {shown} (the newest "
            f"per domain) — find them with mysqlbinlog or SHOW BINLOG EVENTS on {replica}; if "
            "they are harmless and in a domain only this replica writes, purge the binary logs "
            "holding them and run FLUSH BINARY LOGS DELETE_DOMAIN_ID=(<domain>) there, else "
            f"rebuild {replica} from the source; never fail over to {replica} before"
        )
    return (
        f"{replica} has {count} {many} the source never wrote: {shown} — find them with "
        f"mysqlbinlog or SHOW BINLOG EVENTS on {replica}; if they are harmless, inject an empty "
        "transaction for each on the source (SET GTID_NEXT='<gtid>'; BEGIN; COMMIT; SET "
        f"GTID_NEXT='AUTOMATIC'); never fail over to {replica} before"
    )


def _capped(text: str) -> str:
    text = clean_text(text)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"
