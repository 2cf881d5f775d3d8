//! Claims of pfc-vs-cbfc.

use super::*;

/// A 4096 B RoCEv2 payload's frame (the wire's 82 B less 20 of preamble and gap).
const FRAME: f64 = 4158.0;
/// The frames a 64 KiB allocation of 64 B credits holds: 1024 credits / 65 per frame.
const FRAMES_PER_VC: f64 = 15.0;
/// A credit update waiting in a port's control queue.
const UPDATE: f64 = 64.0;

#[test]
fn pfc_vs_cbfc() {
    let r = run("pfc-vs-cbfc", &[], 0);
    let peak = |v: &str, node: &str, port: &str| r.counter(v, node, port, "peak_queue_bytes");
    // "Both are lossless (no drop)".
    for v in ["pfc", "cbfc"] {
        r.exactly(&format!("{v}: no drop"), r.num(v, "drops"), 0.0);
        r.exactly(
            &format!("{v}: every flow finishes"),
            r.num(v, "flows_completed"),
            5.0,
        );
    }
    // pfc: "About 2,400 PFC frames"; the queues' peaks.
    r.about("pfc: PFC frames", r.num("pfc", "pfc_pause_frames"), 2400.0, 0.05);
    r.about(
        "pfc: leaf0 uplink peak (B)",
        peak("pfc", "leaf0", "to-spine0"),
        780e3,
        0.05,
    );
    r.about(
        "pfc: spine downlink peak (B)",
        peak("pfc", "spine0", "to-leaf1"),
        230e3,
        0.05,
    );
    r.about(
        "pfc: h4's port peak (B)",
        peak("pfc", "leaf1", "to-h4"),
        420e3,
        0.05,
    );
    // cbfc: "No PFC frame", stalls, updates.
    r.exactly("cbfc: no PFC frame", r.num("cbfc", "pfc_pause_frames"), 0.0);
    let c = &r.v("cbfc")["cbfc"];
    r.about("cbfc: credit stalls", c["stalls"].as_f64().unwrap(), 5100.0, 0.05);
    r.about(
        "cbfc: credit updates",
        c["update_frames_tx"].as_f64().unwrap(),
        25000.0,
        0.05,
    );
    // "the spine's downlink exactly 15 frames and one 64 B credit update"; "leaf0's uplink
    // exactly 4 x 15 frames and one update (249,544 B): about a third of PFC's".
    r.exactly(
        "cbfc: spine downlink peak (B)",
        peak("cbfc", "spine0", "to-leaf1"),
        FRAMES_PER_VC * FRAME + UPDATE,
    );
    let uplink = peak("cbfc", "leaf0", "to-spine0");
    r.exactly(
        "cbfc: leaf0 uplink peak (B)",
        uplink,
        4.0 * FRAMES_PER_VC * FRAME + UPDATE,
    );
    r.about(
        "cbfc's leaf0 uplink peak over PFC's",
        uplink / peak("pfc", "leaf0", "to-spine0"),
        1.0 / 3.0,
        0.05,
    );
    // "its slowdown is about 4.6 under both"; "the incast's own completion time moves by
    // under 3 %".
    let victim = |v: &str| {
        let f = r.flows_of(v).into_iter().find(|f| f.src == "h3").unwrap();
        f.slowdown()
    };
    r.about("pfc: victim slowdown", victim("pfc"), 4.6, 0.02);
    r.about("cbfc: victim slowdown", victim("cbfc"), 4.6, 0.02);
    let incast = |v: &str| {
        max(r
            .flows_of(v)
            .into_iter()
            .filter(|f| f.dst == "h4")
            .map(|f| f.fct()))
    };
    let moved = incast("cbfc") / incast("pfc") - 1.0;
    r.check(
        moved.abs() < 0.03,
        "the incast's completion moves by under 3 %",
        moved,
    );
}
