import { describe, expect, it } from "vitest";
import {
  attemptText,
  eventRow,
  explorerLink,
  labelsText,
  parseLabels,
  ruleCondition,
  silenceBody,
  sortFiring,
  webhookKindLabel,
  webhookUrlText,
} from "./alerts";
import type { Schemas } from "../api/client";

describe("alert view models", () => {
  it("links the explorer from an hour before the start to the end", () => {
    expect(explorerLink(3, "2026-11-23T06:00:00Z", "2026-11-23T06:30:00Z")).toBe(
      "/clusters/3?from=2026-11-23T05%3A00%3A00.000Z&to=2026-11-23T06%3A30%3A00.000Z",
    );
    expect(explorerLink(3, "2026-11-23T06:00:00Z", null)).toContain("to=2026-11-23T07%3A00%3A00.000Z");
  });

  it("a resolved event ends the explorer window at its time", () => {
    const event = {
      id: 1, rule_id: 1, cluster_id: 2, instance_id: 3, channel_id: 4, kind: "resolved",
      at: "2026-11-23T08:00:00Z", starts_at: "2026-11-23T07:00:00Z", value: 1, suppressed_by: null,
      idempotency_key: "k", summary: "[RESOLVED] x", explorer_url: "https://x/clusters/2",
    } satisfies Schemas["EventOut"];
    expect(eventRow(event).link).toContain("to=2026-11-23T08%3A00%3A00.000Z");
  });

  it("lists firing before pending, oldest first", () => {
    const f = (phase: string, since: string) =>
      ({ rule_id: 1, rule_name: phase + since, metric: "lag", severity: "warning", cluster_id: 1,
         instance_id: 1, channel_id: 1, phase, since, value: 1, notified: true }) satisfies Schemas["FiringOut"];
    const sorted = sortFiring([f("pending", "2026-01-01T00:00:00Z"), f("firing", "2026-01-02T00:00:00Z"), f("firing", "2026-01-01T00:00:00Z")]);
    expect(sorted.map((r) => r.rule_name)).toEqual([
      "firing2026-01-01T00:00:00Z", "firing2026-01-02T00:00:00Z", "pending2026-01-01T00:00:00Z",
    ]);
  });

  it("says each attempt's answer and latency", () => {
    expect(attemptText({ number: 1, at: "", status_code: 500, latency_s: 0.0123, error: "HTTP 500" })).toBe("#1 500 (12 ms)");
    expect(attemptText({ number: 2, at: "", status_code: null, latency_s: null, error: "refused: x" })).toBe("#2 refused: x (—)");
  });

  it("reads a rule's condition", () => {
    expect(ruleCondition({ metric: "lag", threshold: 30, for_s: 60, resolve_threshold: 10 })).toBe(
      "lag > 30, for 60 s, resolves ≤ 10",
    );
  });
});

describe("rule labels in the edit form", () => {
  it("round-trips key=value pairs, keeping '=' inside values", () => {
    const labels = parseLabels(" team=db , tier=1,, url=a=b ");
    expect(labels).toEqual({ team: "db", tier: "1", url: "a=b" });
    expect(parseLabels(labelsText(labels))).toEqual(labels);
    expect(labelsText({})).toBe("");
  });
});

describe("webhook targets", () => {
  it("shows the redacted URL with its fingerprint, and names the kinds", () => {
    expect(webhookUrlText({ url_redacted: "https://hooks.slack.com/…", url_fingerprint: "1a2b3c4d" })).toBe(
      "https://hooks.slack.com/… · #1a2b3c4d",
    );
    expect(webhookKindLabel("alertmanager_api")).toBe("Alertmanager API (POST /api/v2/alerts)");
    expect(webhookKindLabel("something-new")).toBe("something-new");
  });
});

describe("silenceBody", () => {
  it("from now for the hours given, over the scope picked", () => {
    const now = Date.UTC(2026, 10, 23, 10, 0, 0);
    const scope = { clusterId: "1", instanceId: "3", channelId: "", region: "" };
    expect(silenceBody(scope, "2", "maintenance", now)).toEqual({
      cluster_id: 1,
      instance_id: 3,
      channel_id: null,
      region: null,
      ends_at: "2026-11-23T12:00:00.000Z",
      reason: "maintenance",
    });
  });
});
