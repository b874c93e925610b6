import { describe, expect, it } from "vitest";
import { blockedSegment, change, episodeDetail, iso, segment, T0 } from "../test/episodesData";
import { buildEpisodeReport, utcText, webAddress, type EpisodeReportInput } from "./episodeReport";
import { episodeHtml, escapeHtml } from "./html";
import { codeSpan, episodeMarkdown, escapeMarkdown } from "./markdown";

const HOSTILE = "<img src=x onerror=alert(1)>";
const URL_ = "https://lagscope.example/clusters/3/episodes/11";
// A real PNG's start, as html-to-image answers.
const PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

function input(over: Partial<EpisodeReportInput> = {}): EpisodeReportInput {
  return { episode: episodeDetail(), clusterName: "lab", nowMs: T0 + 3_600_000, pageUrl: URL_, chartFile: "lagscope-episode-11.png", ...over };
}

/** An episode whose every server-given name and text is hostile. */
function hostileInput(): EpisodeReportInput {
  return input({
    clusterName: HOSTILE,
    episode: episodeDetail({
      replica: HOSTILE,
      channel: "<script>alert('ch')</script>",
      region: "\"><svg onload=alert(2)>",
      main_cause: { cause: "blocked_by_session", words: `blocked by ${HOSTILE}` },
      causes: [
        blockedSegment({
          sentence: `Blocked by session 4711 (${HOSTILE}@10.0.3.4).`,
          action: `Ask ${HOSTILE} to commit | or roll back`,
          needs: "</p><script>alert(3)</script>",
          evidence: { blocker_thread_id: 4711, blocker_user: HOSTILE, blocker_host: "h&amp;", blocker_statement: "SELECT '</code><img src=y>' /* ` */" },
        }),
      ],
      others: [{ replica: HOSTILE, channel: "", peak_lag_s: 3, lagged: true }],
      param_changes: [change({ instance: HOSTILE, param: "<b>p</b>", new_value: "<i>2</i>" })],
    }),
  });
}

describe("buildEpisodeReport", () => {
  it("has the episode's figures in UTC, its main cause and how it ended", () => {
    const report = buildEpisodeReport(input());
    expect(report.title).toBe("Lag episode: replica1 behind from 2026-11-23 10:00:00 UTC");
    expect(report.context).toBe("cluster lab · episode 11");
    expect(report.mainCause).toBe("durable serial apply");
    expect(report.facts).toEqual([
      { label: "Cluster", value: "lab" },
      { label: "Replica", value: "replica1 (near)" },
      { label: "Started", value: "2026-11-23 10:00:00 UTC" },
      { label: "Ended", value: "2026-11-23 10:05:00 UTC" },
      { label: "Lasted", value: "5 m" },
      { label: "Peak lag", value: "48.3 s at 2026-11-23 10:03:20 UTC" },
      { label: "Main cause", value: "durable serial apply" },
      { label: "How it ended", value: "by itself" },
    ]);
  });

  it("lists each cause in time order with its evidence, and each action once", () => {
    const episode = episodeDetail({
      causes: [
        blockedSegment({ started_at: iso(T0 + 30_000), ended_at: null }),
        segment(),
        segment({ started_at: iso(T0 + 200_000), ended_at: iso(T0 + 260_000) }),
      ],
      ended_at: null,
      ended_how: "ongoing",
    });
    const report = buildEpisodeReport(input({ episode, nowMs: T0 + 300_000 }));
    expect(report.causes.map((c) => c.words)).toEqual([
      "fsync per event on the receiver",
      "blocked by a session on the replica",
      "fsync per event on the receiver",
    ]);
    expect(report.causes[0]?.when).toBe("2026-11-23 10:00:00 UTC – 2026-11-23 10:01:00 UTC (1 m)");
    expect(report.causes[1]?.when).toBe("since 2026-11-23 10:00:30 UTC (4 m 30 s so far)");
    expect(report.causes[1]?.evidence[0]?.title).toBe("The blocking session");
    expect(report.causes[1]?.evidence[0]?.rows).toContainEqual({ label: "user@host", text: "report@10.0.3.4", code: false });
    expect(report.actions).toHaveLength(2);
    expect(report.facts.find((f) => f.label === "Ended")?.value).toBe("ongoing");
    expect(report.facts.find((f) => f.label === "How it ended")?.value).toBe("ongoing");
  });

  it("links the page only by a web address", () => {
    expect(webAddress(URL_)).toBe(URL_);
    expect(webAddress("javascript:alert(1)")).toBeNull();
    expect(webAddress('https://x/"><script>')).toBeNull();
    expect(buildEpisodeReport(input({ pageUrl: "javascript:alert(1)" })).pageUrl).toBeNull();
  });

  it("writes UTC whatever the reader's zone", () => {
    expect(utcText(Date.parse("2026-12-06T03:12:05.900+01:00"))).toBe("2026-12-06 02:12:05 UTC");
  });
});

describe("episodeMarkdown", () => {
  it("reads as a report: title, figures, what to do, causes with evidence, others, changes", () => {
    const episode = episodeDetail({ param_changes: [change()], ended_how: "after_step", ended_by: change() });
    const md = episodeMarkdown(buildEpisodeReport(input({ episode })));
    expect(md).toContain("# Lag episode: replica1 behind from 2026-11-23 10:00:00 UTC\n");
    expect(md).toContain(`cluster lab · episode 11 · [open in Lagscope](<${URL_}>)`);
    expect(md).toContain("![Lag of replica1 over the episode, with its causes](<lagscope-episode-11.png>)");
    expect(md).toContain("| **Main cause** | durable serial apply |");
    expect(md).toContain("| **How it ended** | after step: innodb\\_flush\\_log\\_at\\_trx\\_commit 1→2 |");
    expect(md).toContain("## What to do\n\n- Set sync\\_relay\\_log=0 on the replica (journal step to verify).\n- Ask the owner");
    expect(md).toContain("### 2. blocked by a session on the replica");
    expect(md).toContain("**The blocking session**");
    expect(md).toContain("| session id | 4711 |");
    expect(md).toContain("| statement | ` SELECT * FROM shop.orders WHERE id = 1 FOR UPDATE /* <b>x</b> */ ` |");
    expect(md).toContain("| replica2 | 47.7 s | lagged too |");
    expect(md).toContain("— **ended the episode**");
  });

  it("shows hostile server text as text: no HTML, no link, no table cell made from it", () => {
    const md = episodeMarkdown(buildEpisodeReport(hostileInput()));
    // Outside code spans, every < is escaped; the only raw ones are the link and image targets.
    const outsideCode = md.replace(/(`+) .*? \1/g, "");
    expect(outsideCode.replace(/\]\(<[^>\s]+>\)/g, "")).not.toMatch(/(^|[^\\])</m);
    expect(md).toContain("\\<img src=x onerror=alert(1)\\>");
    expect(md).toContain("Ask \\<img src=x onerror=alert(1)\\> to commit \\| or roll back");
    expect(md).not.toContain("<script>");
    expect(md).toContain("h\\&amp;");
    // The statement, with a backtick inside, in a code span that holds it whole.
    expect(md).toContain("`` SELECT '</code><img src=y>' /* ` */ ``");
  });

  it("escapes what could start markup, on one line", () => {
    expect(escapeMarkdown("a *b* _c_ [d](e) `f` <g> h|i ~j~ &k; \\")).toBe("a \\*b\\* \\_c\\_ \\[d\\](e) \\`f\\` \\<g\\> h\\|i \\~j\\~ \\&k; \\\\");
    expect(escapeMarkdown("# heading")).toBe("\\# heading");
    expect(escapeMarkdown("- item")).toBe("\\- item");
    expect(escapeMarkdown("12. item")).toBe("12\\. item");
    expect(escapeMarkdown("3) item")).toBe("3\\) item");
    expect(escapeMarkdown("48.3 s")).toBe("48.3 s");
    expect(escapeMarkdown("two\nlines\r\n  here")).toBe("two lines here");
    expect(codeSpan("a ``b`` c")).toBe("``` a ``b`` c ```");
    expect(codeSpan("plain")).toBe("` plain `");
  });
});

describe("episodeHtml", () => {
  it("is one self-contained page that can run nothing, with the chart embedded", () => {
    const html = episodeHtml(buildEpisodeReport(input()), PNG);
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).toContain(`content="default-src 'none'; img-src data:; style-src 'unsafe-inline'"`);
    expect(html).toContain(`<img src="${PNG}" alt="Lag of replica1 over the episode, with its causes">`);
    expect(html).toContain("<title>Lag episode: replica1 behind from 2026-11-23 10:00:00 UTC</title>");
    expect(html).toContain('<tr><th scope="row">Main cause</th><td>durable serial apply</td></tr>');
    expect(html).toContain("<h3>blocked by a session on the replica</h3>");
    expect(html).toContain(`<a href="${URL_}">open in Lagscope</a>`);
    expect(html).not.toContain("<script");
  });

  it("escapes hostile server text everywhere, and embeds only a PNG it made", () => {
    const html = episodeHtml(buildEpisodeReport(hostileInput()), `data:image/png;base64,AAAA" onerror="alert(1)`);
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(html).toContain("&quot;&gt;&lt;svg onload=alert(2)&gt;");
    expect(html).toContain("&lt;/p&gt;&lt;script&gt;alert(3)&lt;/script&gt;");
    expect(html).toContain("<code>SELECT &#39;&lt;/code&gt;&lt;img src=y&gt;&#39; /* ` */</code>");
    expect(html).toContain("h&amp;amp;");
    // No element came from the server's text: not one img (the bad picture was refused), no script, no svg.
    expect(html).not.toMatch(/<img|<script|<svg|<b>|<i>|onerror="/i);
  });

  it("escapes the five characters that matter in text and attributes", () => {
    expect(escapeHtml(`<a href="x" title='y'>&amp;</a>`)).toBe("&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;");
  });
});
