//! PFC pause cycles against their closed forms: an ingress priority group (or a NIC receive
//! buffer) pauses its sender until its occupancy has fallen by the bytes that arrived after
//! XOFF plus the XON hysteresis, at the rate it drains, not until the egress queue drains.

use crate::common::*;
use models::ids::PortId;
use models::sim::Sim;

/// XOFF -> XON intervals and XOFF -> next XOFF periods at each port, from the event log.
pub fn cycles(sim: &Sim) -> (Vec<f64>, Vec<f64>) {
    let mut open: std::collections::HashMap<PortId, f64> = Default::default();
    let mut last_xoff: std::collections::HashMap<PortId, f64> = Default::default();
    let (mut off, mut period) = (Vec::new(), Vec::new());
    for r in sim.log.rows() {
        let t = r.time.as_ns_f64();
        match r.event {
            models::telemetry::Trace::Xoff => {
                if let Some(prev) = last_xoff.insert(r.port, t) {
                    period.push(t - prev);
                }
                open.insert(r.port, t);
            }
            models::telemetry::Trace::Xon => {
                if let Some(start) = open.remove(&r.port) {
                    off.push(t - start);
                }
            }
            _ => {}
        }
    }
    (off, period)
}

pub fn median(mut v: Vec<f64>) -> f64 {
    assert!(!v.is_empty(), "no pause cycle");
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Bytes that reach a paused ingress after it decides XOFF, on a 100 Gb/s cable of `delay_ns`:
/// the PFC frame (84 B on the wire) and the frame the port may be sending ahead of it, the
/// cable both ways, the peer's 60-quanta response (512 bit times each) and, on average, half
/// of the frame the peer is sending when it reacts.
fn after_xoff(delay_ns: f64, frame_wire: f64, ahead_wire: f64) -> f64 {
    let bytes_per_ns = 100.0 / 8.0;
    let response_ns = 60.0 * 512.0 / 100.0;
    84.0 + ahead_wire / 2.0 + bytes_per_ns * (2.0 * delay_ns + response_ns) + frame_wire / 2.0
}

#[test]
fn an_incast_pauses_each_ingress_for_n_times_headroom_arrivals_plus_hysteresis_over_c() {
    // N senders at C into one egress of C, PFC with a static XOFF threshold S on each
    // ingress PG and XON hysteresis X, no congestion control. Each PG drains at C/N: the
    // egress FIFO holds N S bytes, many pause cycles of every PG's frames, so any stretch of it
    // is a 1/N share of each. A PG therefore pauses while its occupancy falls by h + X, the h
    // bytes that still arrive after XOFF plus X: T_off = N (h + X) / C, and the cycle repeats
    // every P = N^2 (h + X) / ((N - 1) C), a 1/N duty cycle (each sender averages C/N).
    //
    // In whole frames, as the MMU counts them (256 B cells, 17 per 4158 B frame): XOFF once
    // the PG's shared cells reach S, XON at the departure that brings them to S - X or below;
    // h is the frames the sender still starts in the XOFF's round trip (the PFC frame, the
    // cable both ways, the 60-quanta response).
    let (n, delay_ns) = (4u64, 100.0);
    let (s_bytes, x_bytes) = (2_000_000u64, 100_000u64);
    let toml = format!(
        r#"
        [topology]
        kind = "star"
        hosts = {}
        host_link = {{ rate = "100Gbps", delay = "{delay_ns}ns" }}
        [pfc]
        priorities = [3]
        xoff = "{s_bytes}B"
        xon_offset = "{x_bytes}B"
        [[workload]]
        kind = "incast"
        size = "16MB"
        "#,
        n + 1
    );
    let s = scenario(&toml);
    let mut sim = Sim::new(&s, &s.variants[0]);
    sim.run();
    let report = models::report::VariantReport::new(&sim, 0.0);
    assert!(report.summary.invariants.iter().all(|i| i.ok));
    assert_eq!(report.summary.drops, 0);
    let cell = 256u64;
    let (frame, wire) = (4096u64 + 62, roce_wire(4096));
    let c = frame.div_ceil(cell);
    let (s_cells, x_cells) = (s_bytes.div_ceil(cell), x_bytes.div_ceil(cell));
    let at_xoff = s_cells.div_ceil(c) * c;
    let drained = (at_xoff - (s_cells - x_cells)).div_ceil(c);
    let frame_ns = tx_ns(wire, 100.0);
    let lag_ns = 2.0 * delay_ns + tx_ns(84, 100.0) + 60.0 * 512.0 / 100.0;
    let h = (lag_ns / frame_ns).ceil();
    let t_off = n as f64 * (drained as f64 + h) * frame_ns;
    let p = t_off * n as f64 / (n - 1) as f64;
    let (off, period) = cycles(&sim);
    assert!(off.len() as u64 >= n * 50, "{} pauses", off.len());
    assert_close(median(off), t_off, 0.0, 0.06, "XOFF -> XON (ns)");
    assert_close(median(period), p, 0.0, 0.06, "XOFF -> XOFF (ns)");
}

#[test]
fn a_slow_host_pauses_its_sender_until_its_buffer_drains_by_headroom_arrivals_plus_hysteresis() {
    // One sender at C into a NIC whose host takes data at D < C: XOFF when the buffer's fill
    // reaches XOFF; the h = C T_h bytes sent before the pause takes hold and the hysteresis X
    // then drain at D: XOFF -> XON = (h + X) / D.
    let (delay_ns, x, drain_gbps) = (100.0, 65_536.0, 40.0);
    let toml = format!(
        r#"
        [topology]
        kind = "back-to-back"
        link = {{ rate = "100Gbps", delay = "{delay_ns}ns" }}
        [nic]
        rx_rate = "{drain_gbps}Gbps"
        rx_buffer = "1MiB"
        [pfc]
        priorities = [3]
        xon_offset = "{x}B"
        [[flow]]
        src = "h0"
        dst = "h1"
        size = "8MB"
        "#
    );
    let s = scenario(&toml);
    let mut sim = Sim::new(&s, &s.variants[0]);
    sim.run();
    let report = models::report::VariantReport::new(&sim, 0.0);
    assert!(report.summary.invariants.iter().all(|i| i.ok));
    assert_eq!(report.summary.drops, 0);
    // The receiver sends ACKs on the same port: up to one 86 B ACK ahead of the PFC frame.
    let h = after_xoff(delay_ns, roce_wire(4096) as f64, 86.0);
    let t_off = (h + x) / (drain_gbps / 8.0);
    let (off, _) = cycles(&sim);
    assert!(off.len() >= 10, "{} pauses", off.len());
    assert_close(median(off), t_off, 0.0, 0.06, "XOFF -> XON (ns)");
}

#[test]
fn a_nic_resumes_one_maximum_mtu_below_xoff_as_mlx5_does() {
    // mlx5 update_xoff_threshold: xon = xoff - max(max_mtu, 9216).
    let toml = r#"
        [topology]
        kind = "back-to-back"
        link = { rate = "100Gbps", cable = "3m" }
        [nic]
        rx_rate = "40Gbps"
        [pfc]
        priorities = [3]
        [[flow]]
        src = "h0"
        dst = "h1"
        size = "1MB"
        "#;
    let s = scenario(toml);
    for spec in s.variants[0].resolved.rx.iter().flatten() {
        assert_eq!(spec.xoff_at - spec.xon_at, 9216);
    }
}
