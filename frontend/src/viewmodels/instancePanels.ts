// Instance panels: what each server does per second (commits, group commits, fsyncs, bytes
// written, doublewrite pages), how long a semi-sync source waits for a replica's ack, and warnings
// for durability shortcuts.
import type { Schemas } from "../api/client";
import type { MetricName } from "../api/metrics";
import { mergeRows, withGaps, type GapPoint, type Row } from "./series";
import { INK, MUTED } from "../theme/palette";

type SeriesResponse = Schemas["SeriesResponse"];
type InstanceStatus = Schemas["InstanceStatusOut"];

export const INSTANCE_METRICS: MetricName[] = [
  "commits_per_s",
  "binlog_commits_per_s",
  "binlog_group_commits_per_s",
  "log_fsyncs_per_s",
  "data_fsyncs_per_s",
  "data_written_per_s",
  "log_written_per_s",
  "dblwr_pages_per_s",
  "semi_sync_avg_wait_s",
];

export type PanelUnit = "per_s" | "bytes_per_s" | "ratio" | "ms";

export interface InstanceLine {
  key: string;
  label: string;
  color: string;
  dash: string | undefined;
}

export interface InstancePanel {
  key: string;
  title: string;
  unit: PanelUnit;
  lines: InstanceLine[];
  rows: Row[];
  empty: boolean;
  /** What the panel says when it has nothing to draw. */
  emptyText: string;
}

const EMPTY_TEXT = "No samples in this range (kept at poll resolution only).";

interface PanelSpec {
  key: string;
  title: string;
  unit: PanelUnit;
  parts: { metric: MetricName | "commits_per_group"; suffix: string; dash?: string }[];
  /** Multiplies every value (seconds → ms). */
  scale?: number;
  /** Leave out a server whose value is never above zero in the range. */
  positiveOnly?: boolean;
  emptyText?: string;
}

const PANELS: PanelSpec[] = [
  { key: "commits", title: "Commits per second", unit: "per_s", parts: [{ metric: "commits_per_s", suffix: "" }] },
  {
    key: "groups",
    title: "Binlog group commits per second",
    unit: "per_s",
    parts: [{ metric: "binlog_group_commits_per_s", suffix: "" }],
  },
  {
    key: "per-group",
    title: "Commits per binlog group (bigger groups: fewer fsyncs per commit)",
    unit: "ratio",
    parts: [{ metric: "commits_per_group", suffix: "" }],
  },
  {
    key: "fsyncs",
    title: "fsyncs per second (redo log solid, data files dashed)",
    unit: "per_s",
    parts: [
      { metric: "log_fsyncs_per_s", suffix: " redo" },
      { metric: "data_fsyncs_per_s", suffix: " data", dash: "4 3" },
    ],
  },
  {
    key: "written",
    title: "Bytes written per second (data solid, redo log dashed)",
    unit: "bytes_per_s",
    parts: [
      { metric: "data_written_per_s", suffix: " data" },
      { metric: "log_written_per_s", suffix: " redo", dash: "4 3" },
    ],
  },
  { key: "dblwr", title: "Doublewrite pages per second", unit: "per_s", parts: [{ metric: "dblwr_pages_per_s", suffix: "" }] },
  {
    key: "semi-sync",
    title: "Semi-sync: how long a commit waits for a replica's ack (average, ms)",
    unit: "ms",
    parts: [{ metric: "semi_sync_avg_wait_s", suffix: "" }],
    scale: 1000,
    // Only a semi-sync source waits: MySQL without the plugin has no counter (null), MariaDB has it
    // built in and reports 0 while semi-sync is off, and a replica's stays 0. A line of zeros says
    // nothing, so only a server that waited at all is drawn.
    positiveOnly: true,
    emptyText:
      "No semi-sync wait in this range: semi-synchronous replication is not enabled on these servers (or no commit waited for a replica's acknowledgement).",
  },
];

function scaled(points: GapPoint[], factor: number | undefined): GapPoint[] {
  if (factor === undefined) return points;
  const by = (v: number | null) => (v === null ? null : v * factor);
  return points.map((p) => ({ t: p.t, value: by(p.value), min: by(p.min), max: by(p.max) }));
}

function points(response: SeriesResponse | undefined, instanceId: number, pollMs: number, endMs: number): GapPoint[] {
  const s = response?.series.find((x) => x.instance_id === instanceId && x.channel_id === null);
  return s ? withGaps(s.points, s.bucket_ms, pollMs, endMs) : [];
}

/** binlog commits / group commits per bucket (null where there were no groups). */
export function commitsPerGroup(commits: readonly GapPoint[], groups: readonly GapPoint[]): GapPoint[] {
  const byTime = new Map(groups.map((g) => [g.t, g.value]));
  return commits.map((c) => {
    const g = byTime.get(c.t);
    const value = c.value !== null && g !== undefined && g !== null && g > 0 ? c.value / g : null;
    return { t: c.t, value, min: null, max: null };
  });
}

export function buildInstancePanels(input: {
  series: Partial<Record<MetricName, SeriesResponse>>;
  instances: readonly Pick<InstanceStatus, "id" | "name" | "role">[];
  colors: ReadonlyMap<number, string>;
  pollIntervalS: number;
  endMs: number;
}): InstancePanel[] {
  const pollMs = input.pollIntervalS * 1000;
  return PANELS.map((panel) => {
    const lines: InstanceLine[] = [];
    const perLine = new Map<string, GapPoint[]>();
    for (const instance of input.instances) {
      for (const part of panel.parts) {
        const data = scaled(
          part.metric === "commits_per_group"
            ? commitsPerGroup(
                points(input.series.binlog_commits_per_s, instance.id, pollMs, input.endMs),
                points(input.series.binlog_group_commits_per_s, instance.id, pollMs, input.endMs),
              )
            : points(input.series[part.metric], instance.id, pollMs, input.endMs),
          panel.scale,
        );
        if (data.length === 0 || (panel.positiveOnly && !data.some((p) => p.value !== null && p.value > 0))) continue;
        const key = `${part.metric}:${instance.id}`;
        perLine.set(key, data);
        lines.push({
          key,
          label: `${instance.name}${part.suffix}`,
          color: input.colors.get(instance.id) ?? MUTED,
          dash: part.dash,
        });
      }
    }
    const rows = mergeRows(perLine);
    return {
      key: panel.key,
      title: panel.title,
      unit: panel.unit,
      lines,
      rows,
      empty: rows.length === 0,
      emptyText: panel.emptyText ?? EMPTY_TEXT,
    };
  });
}

/** Instance colours: the source in ink, each replica in its first channel's accent. */
export function instanceColors(
  instances: readonly Pick<InstanceStatus, "id" | "role">[],
  channels: readonly { id: number; instance_id: number }[],
  channelColors: ReadonlyMap<number, string>,
): Map<number, string> {
  return new Map(
    instances.map((i) => {
      const channel = channels.find((c) => c.instance_id === i.id);
      const color = i.role === "source" ? INK : channel ? channelColors.get(channel.id) : undefined;
      return [i.id, color ?? MUTED];
    }),
  );
}

export interface DurabilityWarning {
  instance: string;
  text: string;
}

/** A server running without the redo log or the doublewrite buffer, and what that risks. */
export function durabilityWarnings(instances: readonly InstanceStatus[]): DurabilityWarning[] {
  const warnings: DurabilityWarning[] = [];
  for (const i of instances) {
    if (i.redo_log_enabled === false) {
      warnings.push({
        instance: i.name,
        text: `${i.name} runs with the InnoDB redo log disabled: a crash or power loss can lose committed transactions or leave the data files unusable (only for loading data you can load again).`,
      });
    }
    const dblwr = (i.doublewrite ?? "").toUpperCase();
    if (dblwr === "OFF" || dblwr === "0" || dblwr === "DETECT_ONLY") {
      warnings.push({
        instance: i.name,
        text: `${i.name} runs with innodb_doublewrite=${i.doublewrite}: a page half-written when the server crashes cannot be repaired, and InnoDB may refuse to start until it is restored from a backup.`,
      });
    }
  }
  return warnings;
}

/** The source's heartbeat writer has stopped: its row's age is not shown as anyone's lag. */
export function heartbeatWarnings(instances: readonly InstanceStatus[]): DurabilityWarning[] {
  return instances
    .filter((i) => i.heartbeat_problem)
    .map((i) => ({ instance: i.name, text: `${i.name}: ${i.heartbeat_problem ?? ""}.` }));
}
