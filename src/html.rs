//! `report.html`: one page per run or comparison that opens offline, with nothing beside it.
//! The plots are inside it (PNG data URIs), each with a sentence saying what to look at; the
//! tables are `report.md`'s (built from `summary.json`, so the numbers are the summary's);
//! the other files of the directory are linked by their relative names.

use crate::files;
use crate::metrics::Row;
use anyhow::Result;
use std::fmt::Write as _;
use std::path::Path;

/// Each plot a run may write, in the order a reader wants them, and what to look at in it.
const PLOTS: &[(&str, &str)] = &[
    (
        "compare.png",
        "The variants side by side. Pick the metric your workload lives by: a collective waits for its slowest flow (FCT p99), storage for its median.",
    ),
    (
        "fct_cdf.png",
        "Every flow's slowdown: its completion time over what it would take alone in the fabric. A curve further left is better; a tail to the right is flows that waited in queues, behind pauses or for retransmissions.",
    ),
    (
        "fct_by_size.png",
        "Completion time by flow size. Short flows that take as long as long ones are waiting behind other traffic, not sending.",
    ),
    (
        "flow_rates.png",
        "The flows that matter (those named in [telemetry], victims, the slowest): the rate they received beside the rate their sender allowed itself (DCQCN's limit, a congestion window). A rate at zero while the sender's limit is high is a pause or a stall, not congestion control.",
    ),
    (
        "throughput.png",
        "Goodput over time. Dips are where the fabric stalled: pauses, timeouts, a failed link.",
    ),
    (
        "queues.png",
        "The fullest egress queues over time, with the ECN and trim thresholds. A queue that sits above Kmax marks every packet; one that stays near zero while senders slow down is being paused instead.",
    ),
    (
        "ecn.png",
        "ECN marks and CNPs over time: DCQCN's feedback loop. Marks without CNPs mean the receivers' CNP timer is coalescing them.",
    ),
    (
        "pfc_buffers.png",
        "The fullest lossless ingress buffers against their XOFF threshold and headroom. Each crossing of XOFF sends a pause; anything above the headroom line is dropped in a class meant to be lossless.",
    ),
    (
        "pauses.png",
        "Every PFC pause from XOFF to XON, per port and priority. Long bars on ports far from the congestion are head-of-line blocking spreading upstream.",
    ),
    (
        "pause_graph.png",
        "Where the pauses went: an arrow from each port that paused to the node it paused, redder for longer, storm origins ringed, deadlock cycles in dark red.",
    ),
    (
        "link_utilisation.png",
        "Each switch port's transmit utilisation over time. A port that goes dark while its neighbours are busy is paused, or has lost its traffic to a hash.",
    ),
    (
        "ecmp_balance.png",
        "Each uplink's bytes over the mean of its own switch's uplinks. Bars far from 1 are the hash (or the load balancer) favouring an uplink, not the traffic matrix.",
    ),
];

/// Text made safe inside HTML (names come from the user's file).
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// RFC 4648 base64, for the data URIs.
fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// An HTML table, every cell escaped.
fn table(s: &mut String, t: &crate::metrics::Table) {
    s.push_str("<table>\n<tr>");
    for h in t.header {
        let _ = write!(s, "<th>{}</th>", esc(h));
    }
    s.push_str("</tr>\n");
    for r in &t.rows {
        s.push_str("<tr>");
        for c in r {
            let _ = write!(s, "<td>{}</td>", esc(c));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
}

/// The page for `rows` (one per variant), with `note` (a caveat a reader must see first)
/// and the plots and files already in `dir`.
pub fn page(
    dir: &Path,
    title: &str,
    rows: &[Row],
    note: Option<&str>,
    runs: &[(String, String)],
    skipped: &[(String, String)],
) -> Result<String> {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{t}</title>\n<style>\n\
         body {{ font-family: sans-serif; max-width: 1240px; margin: 2em auto; padding: 0 1em; color: #222; }}\n\
         table {{ border-collapse: collapse; margin: 1em 0; }}\n\
         th, td {{ border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }}\n\
         th:first-child, td:first-child {{ text-align: left; }}\n\
         img {{ max-width: 100%; border: 1px solid #eee; }}\n\
         .note {{ background: #fff4e0; border-left: 4px solid #e69500; padding: 0.5em 1em; }}\n\
         </style>\n</head>\n<body>\n<h1>{t}</h1>\n",
        t = esc(title)
    );
    if let Some(n) = note {
        let _ = writeln!(s, "<p class=\"note\">{}</p>", esc(n));
    }
    if let Some(jobs) = crate::metrics::job_table(rows) {
        s.push_str("<h2>Collective jobs (as nccl-tests reports them)</h2>\n");
        table(&mut s, &jobs);
    }
    s.push_str("<h2>Flows</h2>\n");
    table(&mut s, &crate::metrics::flow_table(rows));
    if rows.iter().any(|r| !r.findings.is_empty()) {
        s.push_str("<h2>Configuration warnings</h2>\n<p>Settings that will not do what they were written for (<code>sim check</code> prints them with their fix).</p>\n<ul>\n");
        let said = crate::check::by_variant(
            rows.iter()
                .flat_map(|r| r.findings.iter().map(move |f| (f, r.name.as_str()))),
        );
        for ([id, at, problem, fix], names) in said {
            let _ = writeln!(
                s,
                "<li><b>{}</b> at <code>{}</code> ({}): {}. Fix: {}.</li>",
                esc(id),
                esc(at),
                esc(&names.join(", ")),
                esc(problem),
                esc(fix)
            );
        }
        s.push_str("</ul>\n");
    }
    for (file, what) in PLOTS {
        let path = dir.join(file);
        if !path.is_file() {
            continue;
        }
        let png = std::fs::read(&path)?;
        let _ = write!(
            s,
            "<h2>{file}</h2>\n<img src=\"data:image/png;base64,{}\" alt=\"{file}\">\n<p>{}</p>\n",
            base64(&png),
            esc(what)
        );
    }
    if !runs.is_empty() {
        s.push_str("<h2>Runs</h2>\n<ul>\n");
        for (label, command) in runs {
            let _ = writeln!(s, "<li>{}: <code>{}</code></li>", esc(label), esc(command));
        }
        s.push_str("</ul>\n");
    }
    if !skipped.is_empty() {
        s.push_str("<h2>Plots not written</h2>\n<ul>\n");
        for (file, why) in skipped {
            let _ = writeln!(s, "<li>{}: {}.</li>", esc(file), esc(why));
        }
        s.push_str("</ul>\n");
    }
    let mut others: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && !n.ends_with(".png") && n != "report.html")
        .collect();
    others.sort();
    if !others.is_empty() {
        s.push_str("<h2>Files</h2>\n<p>Every number above, for your own scripts (what each holds: docs/results.md in sim's repository).</p>\n<ul>\n");
        for n in others {
            let _ = writeln!(s, "<li><a href=\"{0}\">{0}</a></li>", esc(&n));
        }
        s.push_str("</ul>\n");
    }
    s.push_str("</body>\n</html>\n");
    Ok(s)
}

/// Write `report.html` into `dir`, after its plots and other files (`runs`: a comparison's
/// runs and the command that made each; `skipped`: the plots not written, with why).
pub fn write(
    dir: &Path,
    title: &str,
    rows: &[Row],
    note: Option<&str>,
    runs: &[(String, String)],
    skipped: &[(String, String)],
) -> Result<()> {
    let text = page(dir, title, rows, note, runs, skipped)?;
    files::write(&dir.join("report.html"), text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_rfc_4648() {
        // RFC 4648 section 10's test vectors.
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, coded) in cases {
            assert_eq!(base64(plain.as_bytes()), coded, "{plain}");
        }
    }

    #[test]
    fn a_users_names_cannot_write_html() {
        assert_eq!(
            esc("<script>alert('x')</script> & \"y\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;y&quot;"
        );
    }
}
