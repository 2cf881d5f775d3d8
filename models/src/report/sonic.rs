//! `sonic_counters.csv`: each switch's counters as SONiC's show commands print them, so a run
//! can be held against a box one to one (sonic-utilities `scripts/pfcstat`, `queuestat`,
//! `watermarkstat`, `pfcwd/main.py`; column names as their tables print them).
//!
//! | command | column | counters |
//! |---|---|---|
//! | `show interfaces counters` | the interface | `RX_OK`, `RX_ERR` (FCS), `RX_DRP` (ingress PG drops), `TX_OK`, `TX_DRP` (egress queue drops); PFC frames apart, as SAI's interface counters keep MAC control frames out |
//! | `show pfc counters` | `PFC0`..`PFC7` | `Rx`, `Tx` (PFC frames) |
//! | `show queue wredcounters` | `UC0`..`UC7` | `WredDrp/pkts` (0: the model marks, it never WRED-drops), `EcnMarked/pkts` |
//! | `show queue counters --trim` | `UC0`..`UC7` | `Trim/pkts` (frames trimmed on their way into the queue) |
//! | `show queue counters` | `UC0`..`UC7` | `Counter/pkts`, `Counter/bytes`, `Drop/pkts`, `Drop/bytes` |
//! | `show priority-group watermark shared` / `headroom` | `PG0`..`PG7` | `bytes` |
//! | `show queue watermark unicast` | `UC0`..`UC7` | `bytes` |
//! | `show priority-group drop counters` | `PG0`..`PG7` | `pkts` |
//! | `show pfcwd stats` | `Ethernet0:3` | `STATUS`, `STORM DETECTED`, `STORM RESTORED`, `TX OK`, ... |
//!
//! Ports carry the box's own names where its SONiC file has a `PORT` table (each cable takes
//! the file's first free port of its speed, in port order: `Imported::ports_for`; `N/A` for a
//! cable that finds none, which the configuration check names), else SONiC's front-panel
//! convention, `Ethernet<4 i>` for the switch's i-th port in cable order (as `sim export
//! sonic` writes them). Queue i carries priority i (SONiC's
//! default `TC_TO_QUEUE_MAP`). Watermarks are the run's maxima (SONiC's since the last clear).
//! The model charges lossy frames to their egress queue and lossless frames to their ingress
//! priority group, so a lossy PG's watermarks read `N/A`, as SONiC prints a missing counter;
//! a lossless queue's watermark is the most frame bytes it held. `show pfcwd stats` lists
//! only queues the watchdog watched (SONiC hides all-zero rows).

use crate::ids::{NodeId, PortId};
use crate::network::Role;
use crate::sim::Sim;
use std::sync::Arc;

/// One value a SONiC show command prints.
#[derive(Debug, Clone)]
pub struct SonicRow {
    pub switch: Arc<str>,
    /// `Ethernet8`.
    pub interface: Arc<str>,
    /// The simulator's name for the port (`to-spine1`).
    pub port: Arc<str>,
    pub command: &'static str,
    /// The column it prints under (`PFC3`, `UC3`, `PG3`, `Ethernet8:3`).
    pub column: String,
    pub counter: &'static str,
    pub value: String,
}

/// The rows, for the switches whose settings ask for them (`switch.sonic_counters`).
pub(super) fn sonic_rows(sim: &Sim) -> Vec<SonicRow> {
    if !sim
        .variant
        .switch_configs()
        .any(|(s, _)| s.writes_sonic_counters())
    {
        return Vec::new();
    }
    let net = &sim.net;
    let lossless = sim.variant.pfc.mask();
    let mut rows = Vec::new();
    for (n, name) in net.names.iter().enumerate() {
        let Role::Switch(s) = net.roles[n] else {
            continue;
        };
        if !sim.variant.switch_of(s.idx()).writes_sonic_counters() {
            continue;
        }
        let sw = &sim.switches[s.idx()];
        let switch: Arc<str> = Arc::from(name.as_str());
        // The box's own port names, where its SONiC file has a PORT table.
        let rates: Vec<u64> = net
            .ports_of(NodeId(n as u32))
            .map(|p| net.ports[p.idx()].rate.0 / 1_000_000)
            .collect();
        let own: Vec<Option<&str>> = match sim.variant.sonic_of(s.idx()) {
            Some(info) if !info.imported.ports.is_empty() => info
                .imported
                .ports_for(&rates)
                .into_iter()
                .map(|p| p.map(|p| p.name.as_str()))
                .collect(),
            _ => Vec::new(),
        };
        for p in net.ports_of(NodeId(n as u32)) {
            let i = sw.local_index(p);
            let interface: Arc<str> = match own.get(i) {
                Some(Some(name)) => Arc::from(*name),
                Some(None) => Arc::from("N/A"),
                None => Arc::from(format!("Ethernet{}", 4 * i)),
            };
            let port_name: Arc<str> = Arc::from(net.port_name(p));
            let mut push = |command: &'static str, column: String, counter: &'static str, value: String| {
                rows.push(SonicRow {
                    switch: switch.clone(),
                    interface: interface.clone(),
                    port: port_name.clone(),
                    command,
                    column,
                    counter,
                    value,
                })
            };
            let port = &net.ports[p.idx()];
            let c = &port.counters;
            let pfc_rx: u64 = (0..8).map(|q| port.pause.frames(q)).sum();
            let pfc_tx: u64 = (0..8).map(|q| port.xoff.frames(q)).sum();
            let rx = super::counters::received(sim, p);
            for (counter, v) in [
                ("RX_OK", rx.packets.saturating_sub(pfc_rx)),
                ("RX_ERR", c.drops_link_error),
                ("RX_DRP", (0..8).map(|q| c.pg_drops(q)).sum()),
                ("TX_OK", port.tx.packets.saturating_sub(pfc_tx)),
                ("TX_DRP", (0..8).map(|q| c.queue_drops(q).0).sum()),
            ] {
                push(
                    "show interfaces counters",
                    interface.to_string(),
                    counter,
                    v.to_string(),
                );
            }
            if let Some(f) = super::counters::fec_counters(sim, p) {
                for (counter, v) in [
                    ("FEC_CORR", f.corrected),
                    ("FEC_UNCORR", f.uncorrectable),
                    ("FEC_SYMBOL_ERR", f.symbol_errors),
                ] {
                    push(
                        "show interfaces counters fec-stats",
                        interface.to_string(),
                        counter,
                        v.to_string(),
                    );
                }
            }
            llr_rows(sim, p, &interface, &mut push);
            for q in 0..8u8 {
                let qi = q as usize;
                push(
                    "show pfc counters",
                    format!("PFC{q}"),
                    "Rx",
                    port.pause.frames(qi).to_string(),
                );
                push(
                    "show pfc counters",
                    format!("PFC{q}"),
                    "Tx",
                    port.xoff.frames(qi).to_string(),
                );
            }
            for q in 0..8u8 {
                let qi = q as usize;
                for (counter, v) in [
                    ("Counter/pkts", port.tx_prio_packets(q)),
                    ("Counter/bytes", port.tx_prio_bytes(q)),
                    ("Drop/pkts", c.queue_drops(qi).0),
                    ("Drop/bytes", c.queue_drops(qi).1),
                ] {
                    push("show queue counters", format!("UC{q}"), counter, v.to_string());
                }
            }
            for q in 0..8u8 {
                let qi = q as usize;
                for (counter, v) in [
                    ("WredDrp/pkts", "0".to_string()),
                    ("EcnMarked/pkts", c.ecn_marks(qi).to_string()),
                ] {
                    push("show queue wredcounters", format!("UC{q}"), counter, v);
                }
                push(
                    "show queue counters --trim",
                    format!("UC{q}"),
                    "Trim/pkts",
                    c.trims(qi).to_string(),
                );
            }
            for q in 0..8u8 {
                let (shared, headroom) = if lossless.contains(q) {
                    let (s, h) = sw.mmu.pg_watermarks(i, q);
                    (s.to_string(), h.to_string())
                } else {
                    ("N/A".to_string(), "N/A".to_string())
                };
                push(
                    "show priority-group watermark shared",
                    format!("PG{q}"),
                    "bytes",
                    shared,
                );
                push(
                    "show priority-group watermark headroom",
                    format!("PG{q}"),
                    "bytes",
                    headroom,
                );
            }
            for q in 0..8u8 {
                let wm = if lossless.contains(q) {
                    port.peak_prio_bytes(q)
                } else {
                    sw.mmu.queue_watermark(i, q)
                };
                push(
                    "show queue watermark unicast",
                    format!("UC{q}"),
                    "bytes",
                    wm.to_string(),
                );
            }
            for q in 0..8u8 {
                let v = c.pg_drops(q as usize).to_string();
                push("show priority-group drop counters", format!("PG{q}"), "pkts", v);
            }
            for q in lossless.iter() {
                pfcwd_rows(sim, p, q, &interface, &mut push);
            }
        }
    }
    rows
}

/// `show pfcwd stats` for queue `q` of `p`, when the watchdog watched it.
fn pfcwd_rows(
    sim: &Sim,
    p: PortId,
    q: u8,
    interface: &str,
    push: &mut impl FnMut(&'static str, String, &'static str, String),
) {
    let tx = sim.net.ports[p.idx()].tx_prio_packets(q);
    let Some((stormed, w)) = sim.wd.stats(p, q, tx) else {
        return;
    };
    let column = format!("{interface}:{q}");
    let status = if stormed { "stormed" } else { "operational" };
    push("show pfcwd stats", column.clone(), "STATUS", status.to_string());
    for (counter, v) in [
        ("STORM DETECTED", w.detected),
        ("STORM RESTORED", w.restored),
        ("TX OK", w.tx_ok),
        ("TX DROP", w.tx_drop),
        ("RX OK", w.rx_ok),
        ("RX DROP", w.rx_drop),
        ("TX LAST OK", w.last[0]),
        ("TX LAST DROP", w.last[1]),
        ("RX LAST OK", w.last[2]),
        ("RX LAST DROP", w.last[3]),
    ] {
        push("show pfcwd stats", column.clone(), counter, v.to_string());
    }
}

/// `show llr counters` for `p`, when its cable runs link level retry (SONiC's LLR HLD,
/// section 2.6.3: its Rx and Tx tables). The frames `p` sends and the ordered sets it
/// receives about them are counted on its own direction's LLR; the frames it receives and
/// the ordered sets it answers with, on its peer's. Poisoned frames are not modelled (0).
fn llr_rows(
    sim: &Sim,
    p: PortId,
    interface: &str,
    push: &mut impl FnMut(&'static str, String, &'static str, String),
) {
    let [Some(t), Some(r)] = super::counters::llr_directions(sim, p) else {
        return;
    };
    push(
        "show llr counters",
        interface.to_string(),
        "STATUS",
        "Enable".to_string(),
    );
    for (counter, v) in [
        ("RX_INIT", r.rx_init_ctl_os),
        ("RX_INIT_ECHO", t.rx_init_echo_ctl_os),
        ("RX_ACK", t.rx_ack_ctl_os),
        ("RX_NACK", t.rx_nack_ctl_os),
        ("RX_OK", r.rx_ok),
        ("RX_BAD", r.rx_bad),
        ("RX_POISONED", 0),
        ("RX_REPLAY", r.rx_replay),
        ("TX_INIT", t.tx_init_ctl_os),
        ("TX_INIT_ECHO", r.tx_init_echo_ctl_os),
        ("TX_ACK", r.tx_ack_ctl_os),
        ("TX_NACK", r.tx_nack_ctl_os),
        ("TX_OK", t.tx_ok),
        ("TX_DISCARD", t.tx_discard),
        ("TX_POISONED", 0),
        ("TX_REPLAY", t.tx_replay),
    ] {
        push("show llr counters", interface.to_string(), counter, v.to_string());
    }
}
