// An episode report as one self-contained HTML file (mail it, attach it, print it): its own
// styles, the chart embedded as a PNG, and a Content-Security-Policy that lets it run nothing.
// Every text is escaped: a statement or a user name from a server is shown, never parsed.
import type { EpisodeReport, ReportEvidence } from "./episodeReport";

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text as HTML shows it literally, in an element or a quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

// Only a picture the export itself made: a base64 PNG, nothing that could close the attribute.
const PNG_DATA_URL = /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/;

const STYLE = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1c2330; background: #fff; margin: 24px auto; max-width: 1000px; padding: 0 16px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 24px 0 8px; } h3 { font-size: 15px; margin: 16px 0 4px; }
.muted { color: #5b6575; } a { color: #2a63c9; }
table { border-collapse: collapse; margin: 6px 0 12px; } th, td { text-align: left; vertical-align: top; padding: 3px 14px 3px 0; border-bottom: 1px solid #e3e6eb; }
th { font-weight: 600; } table.facts th { color: #5b6575; font-weight: normal; } caption { text-align: left; font-weight: 600; padding-bottom: 2px; }
code { white-space: pre-wrap; overflow-wrap: anywhere; background: #f1f3f6; padding: 1px 4px; border-radius: 3px; }
figure { margin: 12px 0; } figure img { max-width: 100%; border: 1px solid #e3e6eb; border-radius: 6px; }
section.cause { border-left: 3px solid #a15c00; padding: 2px 0 2px 12px; margin: 12px 0; }
`;

function evidence(group: ReportEvidence): string {
  const rows = group.rows
    .map((r) => `<tr><th scope="row">${escapeHtml(r.label)}</th><td>${r.code ? `<code>${escapeHtml(r.text)}</code>` : escapeHtml(r.text)}</td></tr>`)
    .join("");
  return `<table><caption>${escapeHtml(group.title)}</caption>${rows}</table>`;
}

/** `chartPng`: the chart as a PNG data URL, embedded when it is one. */
export function episodeHtml(report: EpisodeReport, chartPng: string | null): string {
  const e = escapeHtml;
  const chart =
    chartPng && PNG_DATA_URL.test(chartPng)
      ? `<figure><img src="${chartPng}" alt="${e(report.chartAlt)}"><figcaption class="muted">${e(report.chartAlt)}</figcaption></figure>`
      : "";
  const facts = report.facts.map((f) => `<tr><th scope="row">${e(f.label)}</th><td>${e(f.value)}</td></tr>`).join("");
  const actions = report.actions.length
    ? `<ul>${report.actions.map((a) => `<li>${e(a)}</li>`).join("")}</ul>`
    : `<p class="muted">No action named for this episode's causes.</p>`;
  const causes = report.causes.length
    ? report.causes
        .map(
          (c) =>
            `<section class="cause"><h3>${e(c.words)}</h3><p class="muted">${e(c.when)} · ${e(c.confidence)}</p>` +
            (c.sentence ? `<p>${e(c.sentence)}</p>` : "") +
            (c.action ? `<p><strong>What to do:</strong> ${e(c.action)}</p>` : "") +
            (c.needs ? `<p><strong>Evidence incomplete:</strong> ${e(c.needs)}</p>` : "") +
            c.evidence.map(evidence).join("") +
            `</section>`,
        )
        .join("")
    : `<p class="muted">No cause was named during this episode.</p>`;
  const others = report.others.length
    ? `<table><thead><tr><th>Replica</th><th>Peak</th><th>During this episode</th></tr></thead><tbody>${report.others
        .map((o) => `<tr><td>${e(o.replica)}</td><td>${e(o.peak)}</td><td>${e(o.during)}</td></tr>`)
        .join("")}</tbody></table>`
    : `<p class="muted">No other replica in this cluster.</p>`;
  const changes = report.changes.length
    ? `<ul>${report.changes.map((c) => `<li>${e(c.at)}: ${e(c.text)}${c.endedIt ? " — <strong>ended the episode</strong>" : ""}</li>`).join("")}</ul>`
    : `<p class="muted">No tracked parameter changed during this episode.</p>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(report.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${e(report.title)}</h1>
<p class="muted">${e(report.context)}${report.pageUrl ? ` · <a href="${e(report.pageUrl)}">open in Lagscope</a>` : ""}</p>
${chart}
<table class="facts">${facts}</table>
<h2>What to do</h2>
${actions}
<h2>Causes and evidence</h2>
${causes}
<h2>The other replicas during it</h2>
${others}
<h2>Parameter changes during it</h2>
${changes}
<p class="muted">Made by Lagscope on ${e(report.madeAt)}.</p>
</body>
</html>
`;
}
