//! `counters.csv`'s rows: every port's and NIC's counters, named as `ethtool -S` and the RDMA
//! hw_counters name them.

use super::CounterRow;
use crate::network::Role;
use crate::sim::Sim;
use std::collections::HashSet;
use std::sync::Arc;

pub(super) fn counters(sim: &Sim) -> Vec<CounterRow> {
    let net = &sim.net;
    let lossless = sim.variant.pfc.mask();
    let us = |d: sim_core::Duration| d.0 / 1_000_000;
    let mut rows = Vec::new();
    let mut names: HashSet<Arc<str>> = HashSet::new();
    let mut intern = move |s: &str| -> Arc<str> {
        if let Some(n) = names.get(s) {
            return n.clone();
        }
        let n: Arc<str> = Arc::from(s);
        names.insert(n.clone());
        n
    };
    let mut push = |node: &str, port: &str, counter: &str, value: u64| {
        rows.push(CounterRow {
            node: intern(node),
            port: intern(port),
            counter: intern(counter),
            value,
        });
    };
    for (n, name) in net.names.iter().enumerate() {
        for p in net.ports_of(crate::ids::NodeId(n as u32)) {
            let port = &net.ports[p.idx()];
            let c = &port.counters;
            let pname = net.port_name(p);
            for (counter, value) in [
                ("tx_packets", port.tx.packets),
                ("tx_bytes", port.tx.bytes),
                ("peak_queue_bytes", port.tx.peak_queue_bytes),
                ("ecn_marked", c.ecn_marked),
                ("trimmed", c.trimmed),
                ("drop_lossy_buffer_full", c.drops_lossy),
                ("drop_headroom_exceeded", c.drops_headroom),
                ("drop_link_error", c.drops_link_error),
            ] {
                push(name, &pname, counter, value);
            }
            // PFC counters (mlx5 names) for lossless priorities and any that saw a pause.
            for prio in 0..8 {
                let (rx, tx) = (&port.pause, &port.xoff);
                if !lossless.contains(prio as u8)
                    && rx.frames(prio) == 0
                    && tx.frames(prio) == 0
                    && c.rx_discards(prio) == 0
                {
                    continue;
                }
                if matches!(net.roles[n], Role::Host(_)) {
                    push(
                        name,
                        &pname,
                        &format!("rx_prio{prio}_discards"),
                        c.rx_discards(prio),
                    );
                }
                push(name, &pname, &format!("rx_prio{prio}_pause"), rx.frames(prio));
                push(name, &pname, &format!("tx_prio{prio}_pause"), tx.frames(prio));
                push(
                    name,
                    &pname,
                    &format!("rx_prio{prio}_pause_duration"),
                    us(rx.duration(prio)),
                );
                push(
                    name,
                    &pname,
                    &format!("tx_prio{prio}_pause_duration"),
                    us(tx.duration(prio)),
                );
            }
            if !lossless.is_empty() {
                push(name, &pname, "tx_pause_storm_warning_events", port.xoff.storms());
                push(name, &pname, "pfc_storm_detected", port.pause.storms());
            }
        }
        if let Role::Host(h) = net.roles[n] {
            let c = &sim.host_counters[h.idx()];
            for (counter, value) in [
                ("data_packets_sent", c.data_packets_sent),
                ("acks_sent", c.acks_sent),
                ("naks_sent", c.naks_sent),
                ("np_ecn_marked_roce_packets", c.np_ecn_marked_roce_packets),
                ("np_cnp_sent", c.np_cnp_sent),
                ("rp_cnp_handled", c.rp_cnp_handled),
                ("rp_cnp_ignored", c.rp_cnp_ignored),
                ("out_of_sequence", c.out_of_sequence),
                ("packet_seq_err", c.packet_seq_err),
                ("local_ack_timeout_err", c.local_ack_timeout_err),
            ] {
                push(name, "nic", counter, value);
            }
        }
    }
    rows
}
