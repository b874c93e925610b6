"""The journal's CSV/Markdown table: cells, rounding, verdict naming, defused formulas, escaping."""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from lagscope.analysis.durability import DurabilityPrediction
from lagscope.analysis.impact import Impact, ImpactVerdict, WindowStats
from lagscope.journal.export import export, seconds, table, to_csv, to_markdown
from lagscope.journal.steps import ChannelImpact, Entry, Journal, JournalSettings, Step
from lagscope.models import Channel, Cluster, Instance, ParamChange

AT = datetime(2030, 1, 1, 10, 41, 7, tzinfo=UTC)


def stats(p95: float | None) -> WindowStats:
    return WindowStats(
        samples=10, lag_p50=p95, lag_p95=p95, lag_max=p95, caught_up_share=0.0,
        apply_rate=None, source_rate=None,
    )  # fmt: skip


def impact(before: float | None, after: float | None, verdict: ImpactVerdict, why: str):
    return Impact(stats(before), stats(after), verdict, None, None, why)


def journal() -> Journal:
    cluster = Cluster(id=1, name="orders")
    db2 = Instance(id=2, name="db2", region="beijing")
    db3 = Instance(id=3, name="=db3", region="")  # a name a spreadsheet would run
    c2, c3 = Channel(id=20, name=""), Channel(id=30, name="eu")
    change = ParamChange(name="sync_binlog", old_value="1", new_value="0")
    step = Step(AT, AT - timedelta(seconds=2), ((change, "db2"),), ())
    entry = Entry(
        step,
        (AT - timedelta(minutes=10), AT),
        (AT + timedelta(seconds=30), AT + timedelta(minutes=10, seconds=30)),
        [
            ChannelImpact(c2, db2, True, impact(46.23, 35.06, ImpactVerdict.IMPROVED, "faster")),
            ChannelImpact(c3, db3, True, impact(0.5, None, ImpactVerdict.WORSE, "slower")),
        ],
    )
    return Journal(cluster, AT, AT, JournalSettings(), [(c2, db2), (c3, db3)], [entry], False)


def test_one_row_per_step_with_each_replicas_p95_before_and_after():
    header, rows = table(journal())
    assert header == ["step", "when", "what changed", "db2 (beijing) lag p95", "=db3/eu lag p95",
                      "verdict", "predicted vs measured capacity"]  # fmt: skip
    assert rows == [[
        "1", "2030-01-01 10:41:07 UTC", "db2: sync_binlog 1 → 0", "46.2 → 35.1 s",
        "0.50 → — s", "db2 (beijing): improved: faster; =db3/eu: worse: slower", "",
    ]]  # fmt: skip


def test_a_step_with_a_prediction_says_predicted_and_measured():
    found = journal()
    entry = found.entries[0]
    flush = DurabilityPrediction(
        settings=("sync_binlog 1 → 0",), applier_s_per_trx=0.002, removed=(), factor=2.0,
        capped=False, predicted=1000.0, measured=1234.4, error=0.2344,
    )  # fmt: skip
    kept_up = DurabilityPrediction(
        settings=("sync_binlog 1 → 0",), applier_s_per_trx=0.002, removed=(), factor=2.0,
        capped=False, predicted=2500.0, measured=None, error=None,
    )  # fmt: skip
    first, second = entry.impacts
    impacts = [replace(first, durability=flush), replace(second, durability=kept_up)]
    found.entries[0] = replace(entry, impacts=impacts)
    _, rows = table(found)
    assert rows[0][-1] == (
        "db2 (beijing) (flush): predicted 1,000 trx/s, measured 1,234 trx/s (+23 %); "
        "=db3/eu (flush): predicted 2,500 trx/s, measured —"
    )


def test_rounding_keeps_small_lags_readable():
    assert [seconds(v) for v in (None, 0.034, 6.94, 62.0, 1234.5)] == [
        "—", "0.03", "6.9", "62.0", "1234",
    ]  # fmt: skip


def test_csv_defuses_formulas_and_quotes_newlines():
    text = to_csv(["a", "=b"], [["-1+1", "x\ny"], ["@SUM(A1)", "plain"]])
    assert list(csv.reader(io.StringIO(text))) == [
        ["a", "'=b"], ["'-1+1", "x\ny"], ["'@SUM(A1)", "plain"],
    ]  # fmt: skip
    assert "'=db3/eu lag p95" in export(journal(), "csv")


def test_markdown_escapes_pipes_and_keeps_one_line_per_row():
    text = to_markdown(["a", "b"], [["x | y", "one\ntwo"]])
    assert text == "| a | b |\n|---|---|\n| x \\| y | one two |\n"
