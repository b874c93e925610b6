// An episode report as Markdown (a ticket, a chat, a wiki). Server text is escaped so a
// renderer shows it as typed: no HTML, no link, no emphasis, no table cell break made from it.
import type { EpisodeReport, ReportEvidence } from "./episodeReport";

/** Text as Markdown shows it literally, on one line: every character that could start markup
 * (including raw HTML's < and entities' &) backslash-escaped, a block marker at its start too. */
export function escapeMarkdown(text: string): string {
  const oneLine = text.replace(/\s*[\r\n]+\s*/g, " ").trim();
  const escaped = oneLine.replace(/[\\`*_[\]<>|~&]/g, "\\$&");
  // A line starting "# ", "> ", "- ", "1. " would be a heading, a quote, a list.
  return escaped.replace(/^[#>+=-]/, "\\$&").replace(/^(\d+)([.)])(?=\s|$)/, "$1\\$2");
}

/** A code span that holds any text: its fence longer than any run of backticks inside. */
export function codeSpan(text: string): string {
  const oneLine = text.replace(/\s*[\r\n]+\s*/g, " ").trim();
  const longest = Math.max(0, ...(oneLine.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  return `${fence} ${oneLine} ${fence}`;
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [`| ${header.join(" | ")} |`, `| ${header.map(() => "---").join(" | ")} |`, ...rows.map((r) => `| ${r.join(" | ")} |`)];
}

function evidence(group: ReportEvidence): string[] {
  return [
    `**${escapeMarkdown(group.title)}**`,
    "",
    ...table(
      ["", ""],
      group.rows.map((r) => [escapeMarkdown(r.label), r.code ? codeSpan(r.text) : escapeMarkdown(r.text)]),
    ),
    "",
  ];
}

export function episodeMarkdown(report: EpisodeReport): string {
  const md = escapeMarkdown;
  const link = report.pageUrl ? ` · [open in Lagscope](<${report.pageUrl}>)` : "";
  const lines = [`# ${md(report.title)}`, "", `${md(report.context)}${link}`, ""];
  // The picture is the PNG export saved beside the report (a file name export/fileName.ts made).
  if (report.chartFile && !/[\s<>]/.test(report.chartFile)) lines.push(`![${md(report.chartAlt)}](<${report.chartFile}>)`, "");
  lines.push(...table(["", ""], report.facts.map((f) => [`**${md(f.label)}**`, md(f.value)])), "");

  lines.push("## What to do", "");
  if (report.actions.length) lines.push(...report.actions.map((a) => `- ${md(a)}`));
  else lines.push("No action named for this episode's causes.");
  lines.push("");

  lines.push("## Causes and evidence", "");
  if (report.causes.length === 0) lines.push("No cause was named during this episode.", "");
  report.causes.forEach((c, i) => {
    lines.push(`### ${i + 1}. ${md(c.words)}`, "", `${md(c.when)} · ${md(c.confidence)}`, "");
    if (c.sentence) lines.push(md(c.sentence), "");
    if (c.action) lines.push(`**What to do:** ${md(c.action)}`, "");
    if (c.needs) lines.push(`**Evidence incomplete:** ${md(c.needs)}`, "");
    for (const group of c.evidence) lines.push(...evidence(group));
  });

  lines.push("## The other replicas during it", "");
  if (report.others.length === 0) lines.push("No other replica in this cluster.");
  else lines.push(...table(["Replica", "Peak", "During this episode"], report.others.map((o) => [md(o.replica), md(o.peak), md(o.during)])));
  lines.push("");

  lines.push("## Parameter changes during it", "");
  if (report.changes.length === 0) lines.push("No tracked parameter changed during this episode.");
  else lines.push(...report.changes.map((c) => `- ${md(c.at)}: ${md(c.text)}${c.endedIt ? " — **ended the episode**" : ""}`));
  lines.push("", "---", "", `Made by Lagscope on ${md(report.madeAt)}.`, "");
  return lines.join("\n");
}
