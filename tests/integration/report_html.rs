//! `report.html` and `sim compare`'s judgement: the page opens offline with every plot of its
//! directory inside it and every other file linked; a user's names cannot write HTML; runs of
//! different scenarios are put side by side without a winner.

use crate::common::{sim, sim_run, tmp};
use std::path::{Path, PathBuf};

fn scenario(hosts: u32, variant: &str) -> String {
    format!(
        r#"
        name = "page"
        [topology]
        kind = "star"
        hosts = {hosts}
        host_link = {{ rate = "100Gbps", cable = "2m" }}
        [[workload]]
        kind = "incast"
        size = "200KB"
        [[variant]]
        name = "{variant}"
        [[variant]]
        name = "uet"
        nic.transport = "uet"
        "#
    )
}

fn run(dir: &Path, name: &str, toml: &str, extra: &[&str]) -> PathBuf {
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(&file, toml).unwrap();
    let out = dir.join(name);
    let o = sim_run(&file, &out, extra);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

#[test]
fn the_page_holds_every_plot_links_every_file_and_escapes_names() {
    let dir = tmp("html-page");
    let out = run(&dir, "a", &scenario(5, "roce <b>&"), &[]);
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(
        page.contains("roce &lt;b&gt;&amp;") && !page.contains("roce <b>"),
        "escaped"
    );
    let mut pngs = 0;
    for e in std::fs::read_dir(&out).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "report.html" {
            continue;
        }
        if name.ends_with(".png") {
            pngs += 1;
            assert!(
                page.contains(&format!("<h2>{name}</h2>\n<img src=\"data:image/png;base64,")),
                "{name}"
            );
        } else {
            assert!(page.contains(&format!("<a href=\"{name}\">")), "{name} linked");
        }
    }
    assert!(pngs >= 3, "the run drew plots");
    // Self-contained: nothing fetched from anywhere (links are the directory's own files).
    assert_eq!(
        page.matches(" src=\"").count(),
        page.matches(" src=\"data:image/png;base64,").count()
    );
    assert!(!page.contains("http://") && !page.contains("https://"));
}

#[test]
fn compare_names_no_winner_between_different_scenarios() {
    let dir = tmp("html-compare");
    let a = run(&dir, "a", &scenario(5, "roce"), &["--plots", "none"]);
    let b = run(&dir, "b", &scenario(9, "roce"), &["--plots", "none"]);
    let c = run(
        &dir,
        "c",
        &scenario(5, "roce"),
        &["--plots", "none", "--set", "nic.mtu=1024B"],
    );
    let compare = |x: &Path, y: &Path, name: &str| {
        let out = dir.join(name);
        let o = sim(&[
            "compare",
            x.to_str().unwrap(),
            y.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let md = std::fs::read_to_string(out.join("report.md")).unwrap();
        let html = std::fs::read_to_string(out.join("report.html")).unwrap();
        (String::from_utf8_lossy(&o.stderr).into_owned(), md, html)
    };
    // A 4-to-1 and an 8-to-1 incast: side by side, said to differ, nobody best.
    let (err, md, html) = compare(&a, &b, "ab");
    assert!(err.contains("different scenarios"), "{err}");
    assert!(md.contains("different scenarios") && html.contains("different scenarios"));
    assert!(
        md.contains("a: page, 5 hosts, 4 flows; b: page, 9 hosts, 8 flows"),
        "{md}"
    );
    assert!(!md.contains("Lowest FCT p99"), "{md}");
    // The same scenario with another MTU is what a comparison is for.
    let (err, md, _) = compare(&a, &c, "ac");
    assert!(!err.contains("different scenarios"), "{err}");
    assert!(md.contains("Lowest FCT p99"), "{md}");
}
