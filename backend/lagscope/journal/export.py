"""The tuning journal as the table an engineer pastes into a ticket: CSV or Markdown.

Columns (the journal page's own): ``step``, ``when`` (UTC), ``what changed``, one ``<replica> lag
p95`` column per replica channel (``before → after``, seconds), ``verdict`` (with its one-sentence
reason). CSV and Markdown carry the same cells, so a CSV opened in a spreadsheet reads like the
page. The verdict is that of the channels the step touched (``in_scope``); when they disagree,
each is named.

CSV cells a spreadsheet would run as a formula (starting ``=``, ``+``, ``-``, ``@``, tab or CR;
annotation text and names are user input) are prefixed with ``'`` (OWASP CSV injection).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Literal

from lagscope.journal.steps import ChannelImpact, Entry, Journal
from lagscope.models import Channel, Instance

Format = Literal["csv", "md"]
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def channel_label(channel: Channel, instance: Instance) -> str:
    name = f"{instance.name}/{channel.name}" if channel.name else instance.name
    return f"{name} ({instance.region})" if instance.region else name


def seconds(value: float | None) -> str:
    if value is None:
        return "—"
    if abs(value) < 1:
        return f"{value:.2f}"
    return f"{value:.1f}" if abs(value) < 100 else f"{value:.0f}"


def what_changed(entry: Entry) -> str:
    step = entry.step
    parts = [f"{name}: {c.name} {c.old_value} → {c.new_value}" for c, name in step.changes]
    parts += [f"note: {a.text}" for a in step.annotations]
    return "; ".join(parts)


def _p95(impact: ChannelImpact | None) -> str:
    if impact is None:
        return ""
    before, after = impact.impact.before.lag_p95, impact.impact.after.lag_p95
    if before is None and after is None:
        return "—"
    return f"{seconds(before)} → {seconds(after)} s"


def _verdict_text(impact: ChannelImpact) -> str:
    verdict = impact.impact.verdict.value.replace("_", " ")
    reason = impact.impact.reason.strip()
    return f"{verdict}: {reason}" if reason else verdict


def verdict(entry: Entry) -> str:
    judged = [i for i in entry.impacts if i.in_scope] or list(entry.impacts)
    texts = list(dict.fromkeys(_verdict_text(i) for i in judged))
    if len(texts) <= 1:
        return texts[0] if texts else ""
    return "; ".join(f"{channel_label(i.channel, i.instance)}: {_verdict_text(i)}" for i in judged)


def _trx_s(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f} trx/s"


def predictions(entry: Entry) -> str:
    """Each prediction the step carries (workers, flush), with what was measured after it."""
    parts = []
    for found in entry.impacts:
        for what, guess in (("workers", found.prediction), ("flush", found.durability)):
            if guess is None:
                continue
            text = f"{channel_label(found.channel, found.instance)} ({what}): predicted"
            text += f" {_trx_s(guess.predicted)}, measured {_trx_s(guess.measured)}"
            if guess.error is not None:
                text += f" ({guess.error * 100:+.0f} %)"
            parts.append(text)
    return "; ".join(parts)


def table(journal: Journal) -> tuple[list[str], list[list[str]]]:
    """Header and rows, one row per step in time order."""
    channels = [(c.id, channel_label(c, i)) for c, i in journal.channels]
    header = ["step", "when", "what changed", *(f"{label} lag p95" for _, label in channels)]
    header += ["verdict", "predicted vs measured capacity"]
    rows = []
    for number, entry in enumerate(journal.entries, start=1):
        by_channel = {i.channel.id: i for i in entry.impacts}
        when = entry.step.at.strftime("%Y-%m-%d %H:%M:%S UTC")
        row = [str(number), when, what_changed(entry)]
        row += [_p95(by_channel.get(cid)) for cid, _ in channels]
        row += [verdict(entry), predictions(entry)]
        rows.append(row)
    return header, rows


def _csv_cell(text: str) -> str:
    return "'" + text if text.startswith(_FORMULA_START) else text


def to_csv(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")  # RFC 4180
    writer.writerow([_csv_cell(h) for h in header])
    writer.writerows([_csv_cell(c) for c in row] for row in rows)
    return out.getvalue()


def _md_cell(text: str) -> str:
    flat = " ".join(text.split())  # a newline would end the table row
    return flat.replace("\\", "\\\\").replace("|", "\\|")


def to_markdown(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(_md_cell(h) for h in header) + " |"]
    lines.append("|" + "|".join("---" for _ in header) + "|")
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def export(journal: Journal, fmt: Format) -> str:
    header, rows = table(journal)
    return to_csv(header, rows) if fmt == "csv" else to_markdown(header, rows)
