import { describe, expect, it } from "vitest";
import {
  capacityText,
  durabilityLines,
  errorText,
  predictionLines,
  type DurabilityPredictionOut,
  type PredictionOut,
} from "./prediction";

function prediction(over: Partial<PredictionOut> = {}): PredictionOut {
  return {
    workers_before: 1,
    workers_after: 4,
    mode: "conservative",
    factor: 2.0,
    stream_allows: 2.93,
    cores: 2,
    predicted: 1000.0,
    measured: 900.0,
    error: -0.1,
    ...over,
  };
}

// 2 ms of applier time per trx at 500 trx/s; the change removes 1.2 ms of it: 2 ÷ 0.8 = 2.5×.
function durability(over: Partial<DurabilityPredictionOut> = {}): DurabilityPredictionOut {
  return {
    settings: ["innodb_flush_log_at_trx_commit 1 → 2", "sync_binlog 1 → 0"],
    applier_s_per_trx: 0.002,
    removed: [
      { what: "redo log fsync", s_per_trx: 0.00036 },
      { what: "binary log fsync", s_per_trx: 0.00084 },
    ],
    factor: 2.5,
    capped: false,
    predicted: 1250,
    measured: 1125,
    error: -0.1,
    unknown: [],
    ...over,
  };
}

describe("capacityText", () => {
  it("groups thousands and keeps one decimal under 10 trx/s", () => {
    expect(capacityText(1000)).toBe("1,000");
    expect(capacityText(12_345.6)).toBe("12,346");
    expect(capacityText(948.4)).toBe("948");
    expect(capacityText(2.345)).toBe("2.3");
    expect(capacityText(0)).toBe("0.0");
  });
});

describe("errorText", () => {
  it("rounds to whole percent with a minus sign, a plus, or ± at zero", () => {
    // −0.1 × 100 is −10.000000000000002 in floats: still −10 %.
    expect(errorText(-0.1)).toBe("−10 %");
    expect(errorText(0.124)).toBe("+12 %");
    expect(errorText(0.126)).toBe("+13 %");
    expect(errorText(-0.004)).toBe("±0 %");
    expect(errorText(0)).toBe("±0 %");
    // Halves away from zero on both sides (Math.round(−12.5) alone would give −12).
    expect(errorText(-0.125)).toBe("−13 %");
    expect(errorText(0.125)).toBe("+13 %");
    expect(errorText(-1)).toBe("−100 %");
  });
});

describe("predictionLines", () => {
  it("says what was predicted from the capacity before and what was measured", () => {
    expect(predictionLines(prediction(), 500)).toEqual({
      predicted:
        "1 → 4 workers (conservative): predicted ~1,000 trx/s (2.0× the 500 trx/s before; " +
        "the source's writes allow 2.9×, capped by 2 cores)",
      measured: "measured 900 trx/s (−10 % vs predicted)",
    });
  });

  it("names no cores cap when the cores are unknown or did not bind", () => {
    const unknown = predictionLines(prediction({ cores: null, factor: 2.93, predicted: 1465 }), 500);
    expect(unknown.predicted).toBe(
      "1 → 4 workers (conservative): predicted ~1,465 trx/s (2.9× the 500 trx/s before; the source's writes allow 2.9×)",
    );
    const loose = predictionLines(prediction({ cores: 8, stream_allows: 1.44, factor: 1.44, predicted: 720 }), 500);
    expect(loose.predicted).not.toContain("capped");
    expect(loose.predicted).toContain("(1.4× the 500 trx/s before; the source's writes allow 1.4×)");
  });

  it("says a replica that kept up before had no capacity to scale", () => {
    const lines = predictionLines(prediction({ predicted: null, error: null, mode: "optimistic" }), null);
    expect(lines.predicted).toBe(
      "1 → 4 workers (optimistic): the source's writes allow 2.9×; no capacity before the step to scale (it kept up)",
    );
    expect(lines.measured).toBe("measured 900 trx/s");
  });

  it("says a replica that kept up after the step is not measurable", () => {
    const lines = predictionLines(prediction({ measured: null, error: null }), 500);
    expect(lines.measured).toBe("measured: not measurable (it kept up after the step)");
  });

  it("prints a measured capacity above the prediction with a plus", () => {
    const lines = predictionLines(prediction({ measured: 1_234.5, error: 0.2345 }), 500);
    expect(lines.measured).toBe("measured 1,235 trx/s (+23 % vs predicted)");
  });

  it("counts one worker in the singular", () => {
    const lines = predictionLines(prediction({ workers_before: 4, workers_after: 1, stream_allows: 1, factor: 0.5, predicted: 500 }), 1000);
    expect(lines.predicted).toBe(
      "4 → 1 worker (conservative): predicted ~500 trx/s (0.5× the 1,000 trx/s before; the source's writes allow 1.0×)",
    );
  });
});

describe("durabilityLines", () => {
  it("says what the removed fsync time predicted and what was measured", () => {
    expect(durabilityLines(durability(), 500)).toEqual({
      predicted:
        "innodb_flush_log_at_trx_commit 1 → 2, sync_binlog 1 → 0: predicted ~1,250 trx/s (2.5× the 500 trx/s " +
        "before; removes 0.36 ms redo log fsync, 0.84 ms binary log fsync of 2.00 ms per transaction)",
      measured: "measured 1,125 trx/s (−10 % vs predicted)",
    });
  });

  it("marks a capped factor as a lower bound", () => {
    const lines = durabilityLines(
      durability({
        settings: ["sync_relay_log 1 → 0"],
        removed: [{ what: "relay-log wait", s_per_trx: 0.0019 }],
        factor: 10,
        capped: true,
        predicted: 5000,
        measured: 3000,
        error: -0.4,
      }),
      500,
    );
    expect(lines).toEqual({
      predicted:
        "sync_relay_log 1 → 0: predicted ~5,000 trx/s (10.0× the 500 trx/s before; " +
        "removes 1.90 ms relay-log wait of 2.00 ms per transaction); capped at 10×: its waits were " +
        "over 90 % of its time, and what its CPU allows without them was not measured",
      measured: "measured 3,000 trx/s (−40 % vs predicted)",
    });
  });

  it("names the parts it could not price after the prediction", () => {
    const unknown = ["redo log fsync: not timed (performance_schema's file summary)"];
    const partly = durabilityLines(
      durability({ removed: [{ what: "binary log fsync", s_per_trx: 0.00084 }], factor: 1.724, predicted: 862.07, unknown }),
      500,
    );
    expect(partly.predicted).toBe(
      "innodb_flush_log_at_trx_commit 1 → 2, sync_binlog 1 → 0: predicted ~862 trx/s (1.7× the 500 trx/s before; " +
        "removes 0.84 ms binary log fsync of 2.00 ms per transaction); " +
        "not priced: redo log fsync: not timed (performance_schema's file summary)",
    );
    const none = durabilityLines(
      durability({ settings: ["sync_binlog 1 → 0"], removed: [], factor: 1, predicted: 500, unknown }),
      null,
    );
    expect(none.predicted).toBe(
      "sync_binlog 1 → 0: predicted ~500 trx/s (1.0× the capacity before; removes nothing of 2.00 ms per transaction); " +
        "not priced: redo log fsync: not timed (performance_schema's file summary)",
    );
  });

  it("says why there is no prediction", () => {
    const lines = durabilityLines(
      durability({
        settings: ["sync_binlog 1 → 0"],
        applier_s_per_trx: null,
        removed: [],
        factor: null,
        predicted: null,
        measured: 900,
        error: null,
        unknown: ["no capacity before the change: the replica kept up", "the applier's threads were not read in the window"],
      }),
      null,
    );
    expect(lines).toEqual({
      predicted:
        "sync_binlog 1 → 0: no prediction (no capacity before the change: the replica kept up; " +
        "the applier's threads were not read in the window)",
      measured: "measured 900 trx/s",
    });
  });

  it("says a replica that kept up after the step is not measurable", () => {
    const lines = durabilityLines(durability({ measured: null, error: null }), 500);
    expect(lines.measured).toBe("measured: not measurable (it kept up after the step)");
  });
});

describe("durabilityLines with a note", () => {
  it("says what bounds the prediction besides the removed costs", () => {
    const note = "the applier was idle 42% of the window, waiting for the receiver: relaxing its own fsyncs does not raise what it is sent";
    const lines = durabilityLines(
      durability({
        settings: ["innodb_flush_log_at_trx_commit 1 → 2"],
        removed: [{ what: "redo log fsync", s_per_trx: 0.0003 }],
        applier_s_per_trx: 0.00089,
        factor: 1,
        predicted: 654,
        measured: 724,
        error: 724 / 654 - 1,
        note,
      }),
      654,
    );
    expect(lines.predicted).toBe(
      "innodb_flush_log_at_trx_commit 1 → 2: predicted ~654 trx/s (1.0× the 654 trx/s before; removes 0.30 ms " +
        `redo log fsync of 0.89 ms per transaction); ${note}`,
    );
    expect(lines.measured).toBe("measured 724 trx/s (+11 % vs predicted)");
  });
});
