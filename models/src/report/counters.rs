//! `counters.csv`'s rows: every port's and NIC's counters, named as `ethtool -S` and the RDMA
//! hw_counters name them: `rx_packets`, `rx_bytes` (frames received whole, PFC frames
//! included), `tx_packets`, `tx_bytes`; on a NIC's port, per priority that carried traffic,
//! `rx_prio{p}_packets`, `rx_prio{p}_bytes`, `tx_prio{p}_packets`, `tx_prio{p}_bytes` (PFC
//! frames apart, as mlx5 counts them); PFC's `rx/tx_prio{p}_pause` and `_pause_duration`.

use crate::network::Role;
use crate::sim::Sim;
use std::collections::HashMap;

/// `counters.csv`'s rows, their names interned: a large fabric has millions of rows naming a
/// few hundred thousand nodes and ports and a few dozen counters, so a row is three name
/// numbers and its value (24 B; at 65,536 hosts 4.6 M rows take 110 MB, where three shared
/// string pointers a row took 258 MB).
#[derive(Debug, Clone, Default)]
pub struct Counters {
    names: Vec<Box<str>>,
    rows: Vec<Row>,
}

#[derive(Debug, Clone, Copy)]
struct Row {
    node: u32,
    port: u32,
    counter: u32,
    value: u64,
}

/// One row of `counters.csv`.
#[derive(Debug, Clone, Copy)]
pub struct Counter<'a> {
    pub node: &'a str,
    pub port: &'a str,
    pub counter: &'a str,
    pub value: u64,
}

impl Counters {
    /// The rows, in the order the report made them.
    pub fn iter(&self) -> impl Iterator<Item = Counter<'_>> {
        self.rows.iter().map(|r| Counter {
            node: &self.names[r.node as usize],
            port: &self.names[r.port as usize],
            counter: &self.names[r.counter as usize],
            value: r.value,
        })
    }

    /// Every name the rows use, by number.
    pub fn names(&self) -> &[Box<str>] {
        &self.names
    }

    /// The rows as the numbers of their node, port and counter names in [`Counters::names`],
    /// and their values.
    pub fn numbered(&self) -> impl Iterator<Item = (usize, usize, usize, u64)> + '_ {
        self.rows
            .iter()
            .map(|r| (r.node as usize, r.port as usize, r.counter as usize, r.value))
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// What port `q` received whole: frames and bytes in all (PFC frames included), and per
/// priority (PFC frames apart). Derived, not counted per frame: what the peer sent, less what
/// the cable lost on the way (corrupted or cut) and what is still on it.
pub(super) struct Received {
    pub packets: u64,
    pub bytes: u64,
    pub prio: [(u64, u64); 8],
}

/// The RS-FEC counters of receiving port `q` (None unless its cable runs FEC with pre-FEC
/// bit errors), drawn from a stream of their own so that both result files that show them
/// agree and no other draw moves (`Link::fec_counters`).
pub(super) fn fec_counters(sim: &Sim, q: crate::ids::PortId) -> Option<crate::fec::FecCounters> {
    let p = sim.net.peer[q.idx()];
    let rng = || sim_core::RngStreams::new(sim.seed).stream("fec-counters", q.0 as u64);
    sim.net.links[p.idx()].fec_counters(sim.net.ports[p.idx()].rate, sim.totals.end_time, rng)
}

pub(super) fn received(sim: &Sim, q: crate::ids::PortId) -> Received {
    let net = &sim.net;
    let mut r = Received {
        packets: 0,
        bytes: 0,
        prio: [(0, 0); 8],
    };
    let p = net.peer[q.idx()];
    if p == crate::ids::PortId::NONE {
        return r;
    }
    let sender = &net.ports[p.idx()];
    let lost = &net.ports[q.idx()].counters;
    r.packets = sender.tx.packets;
    r.bytes = sender.tx.bytes;
    for prio in 0..8u8 {
        let (l_p, l_b) = lost.wire_lost(prio as usize);
        r.prio[prio as usize] = (
            sender.tx_prio_packets(prio).saturating_sub(l_p),
            sender.tx_prio_bytes(prio).saturating_sub(l_b),
        );
    }
    for slot in 0..9 {
        let (l_p, l_b) = lost.wire_lost(slot);
        r.packets = r.packets.saturating_sub(l_p);
        r.bytes = r.bytes.saturating_sub(l_b);
    }
    for pkt in net.links[p.idx()].in_flight(&net.pool) {
        if pkt.kind == crate::packet::Kind::LlrCtl {
            continue; // an ordered set, not a frame
        }
        r.packets = r.packets.saturating_sub(1);
        r.bytes = r.bytes.saturating_sub(pkt.frame as u64);
        if !pkt.is_link_control() {
            let c = &mut r.prio[pkt.prio as usize & 7];
            *c = (c.0.saturating_sub(1), c.1.saturating_sub(pkt.frame as u64));
        }
    }
    r
}

/// A port's CBFC counters per VC: its egress's credits consumed, update frames received,
/// stalls and time starved (µs); its ingress's credits granted back (of which recovered at a
/// link re-initialisation), update frames sent and the most bytes' credits it held (the UE specification's counter names were not available:
/// named for what they count).
fn cbfc_counters(c: &crate::cbfc::Cbfc, port: usize, mut push: impl FnMut(&str, u64)) {
    let credit = c.cfg.credit.0;
    for p in c.mask.iter() {
        let v = c.vc(port, p);
        for (counter, value) in [
            ("credits_consumed", v.consumed),
            ("credit_updates_rx", v.updates_rx),
            ("credit_stalls", v.stalls),
            ("credit_starved_us", v.starved.0 / 1_000_000),
            ("credits_granted", v.freed),
            ("credits_recovered", v.recovered),
            ("credit_updates_tx", v.updates_tx),
            ("peak_credit_held_bytes", v.peak_held * credit),
        ] {
            push(&format!("cbfc_prio{p}_{counter}"), value);
        }
    }
}

/// The rows every port has, each with what it reads (what the port received, the port).
type PortCounter = (&'static str, fn(&Received, &crate::port::Port) -> u64);
const PORT_COUNTERS: [PortCounter; 10] = [
    ("rx_packets", |rx, _| rx.packets),
    ("rx_bytes", |rx, _| rx.bytes),
    ("tx_packets", |_, p| p.tx.packets),
    ("tx_bytes", |_, p| p.tx.bytes),
    ("peak_queue_bytes", |_, p| p.tx.peak_queue_bytes),
    ("ecn_marked", |_, p| p.counters.ecn_marked),
    ("trimmed", |_, p| p.counters.trimmed),
    ("drop_lossy_buffer_full", |_, p| p.counters.drops_lossy),
    ("drop_headroom_exceeded", |_, p| p.counters.drops_headroom),
    ("drop_link_error", |_, p| p.counters.drops_link_error),
];

/// The rows every NIC has (the RDMA hw_counters' names), each with what it reads.
type NicCounter = (&'static str, fn(&crate::nic::HostCounters) -> u64);
const NIC_COUNTERS: [NicCounter; 10] = [
    ("data_packets_sent", |c| c.data_packets_sent),
    ("acks_sent", |c| c.acks_sent),
    ("naks_sent", |c| c.naks_sent),
    ("np_ecn_marked_roce_packets", |c| c.np_ecn_marked_roce_packets),
    ("np_cnp_sent", |c| c.np_cnp_sent),
    ("rp_cnp_handled", |c| c.rp_cnp_handled),
    ("rp_cnp_ignored", |c| c.rp_cnp_ignored),
    ("out_of_sequence", |c| c.out_of_sequence),
    ("packet_seq_err", |c| c.packet_seq_err),
    ("local_ack_timeout_err", |c| c.local_ack_timeout_err),
];

/// Every row, `ports` naming each port ([`crate::network::Network::port_names`]).
pub(super) fn counters(sim: &Sim, ports: &[Box<str>]) -> Counters {
    let net = &sim.net;
    let lossless = sim.variant.pfc.mask();
    let us = |d: sim_core::Duration| d.0 / 1_000_000;
    // Room for every port's ten rows and every NIC's rows at once: a vector that grows by
    // doubling holds its old and its new block while it copies (at 65,536 hosts, 4.6 M rows
    // of 24 B: a 100 MB block beside a 200 MB one). Room reserved and not used is never
    // touched, so it takes address space, not memory.
    let rows = Vec::with_capacity(net.ports.len() * 10 + net.host_node.len() * 20);
    let mut t = Table {
        counters: Counters {
            names: Vec::new(),
            rows,
        },
        index: HashMap::new(),
    };
    // The names every port's or NIC's rows use, numbered once, not looked up per row.
    let port_counters = PORT_COUNTERS.map(|(c, _)| t.id(c));
    // `{dir}_prio{p}_{what}` for the eight priorities.
    let per_prio = |t: &mut Table, dir: &str, what: &str| -> [u32; 8] {
        std::array::from_fn(|p| t.id(&format!("{dir}_prio{p}_{what}")))
    };
    let rx_packets = per_prio(&mut t, "rx", "packets");
    let rx_bytes = per_prio(&mut t, "rx", "bytes");
    let tx_packets = per_prio(&mut t, "tx", "packets");
    let tx_bytes = per_prio(&mut t, "tx", "bytes");
    let rx_discards = per_prio(&mut t, "rx", "discards");
    let rx_pause = per_prio(&mut t, "rx", "pause");
    let tx_pause = per_prio(&mut t, "tx", "pause");
    let rx_pause_duration = per_prio(&mut t, "rx", "pause_duration");
    let tx_pause_duration = per_prio(&mut t, "tx", "pause_duration");
    let nic_counters = NIC_COUNTERS.map(|(c, _)| t.id(c));
    let nic = t.id("nic");
    for (n, name) in net.names.iter().enumerate() {
        let nid = t.id(name);
        let host = matches!(net.roles[n], Role::Host(_));
        for p in net.ports_of(crate::ids::NodeId(n as u32)) {
            let port = &net.ports[p.idx()];
            let c = &port.counters;
            let pid = t.id(&ports[p.idx()]);
            let rx = received(sim, p);
            for ((_, read), id) in PORT_COUNTERS.iter().zip(port_counters) {
                t.row(nid, pid, id, read(&rx, port));
            }
            if let Some(f) = fec_counters(sim, p) {
                t.push(nid, pid, "fec_corrected_codewords", f.corrected);
                t.push(nid, pid, "fec_uncorrectable_codewords", f.uncorrectable);
                t.push(nid, pid, "fec_symbol_errors", f.symbol_errors);
            }
            llr_counters(sim, p, |counter, value| t.push(nid, pid, counter, value));
            // A NIC's traffic per priority (mlx5's per-priority counters), for the
            // priorities that carried any.
            if host {
                for prio in 0..8 {
                    let (rx_p, rx_b) = rx.prio[prio];
                    let (tx_p, tx_b) = (port.tx_prio_packets(prio as u8), port.tx_prio_bytes(prio as u8));
                    if rx_p + tx_p == 0 {
                        continue;
                    }
                    t.row(nid, pid, rx_packets[prio], rx_p);
                    t.row(nid, pid, rx_bytes[prio], rx_b);
                    t.row(nid, pid, tx_packets[prio], tx_p);
                    t.row(nid, pid, tx_bytes[prio], tx_b);
                }
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
                if host {
                    t.row(nid, pid, rx_discards[prio], c.rx_discards(prio));
                }
                t.row(nid, pid, rx_pause[prio], rx.frames(prio));
                t.row(nid, pid, tx_pause[prio], tx.frames(prio));
                t.row(nid, pid, rx_pause_duration[prio], us(rx.duration(prio)));
                t.row(nid, pid, tx_pause_duration[prio], us(tx.duration(prio)));
            }
            if !lossless.is_empty() {
                t.push(nid, pid, "tx_pause_storm_warning_events", port.xoff.storms());
                t.push(nid, pid, "pfc_storm_detected", port.pause.storms());
            }
            if sim.cbfc.on() {
                cbfc_counters(&sim.cbfc, p.idx(), |c, v| t.push(nid, pid, c, v));
            }
        }
        if let Role::Host(h) = net.roles[n] {
            let c = &sim.host_counters[h.idx()];
            for ((_, read), id) in NIC_COUNTERS.iter().zip(nic_counters) {
                t.row(nid, nic, id, read(c));
            }
        }
    }
    t.counters
}

/// The rows being written, and each name's number.
struct Table {
    counters: Counters,
    index: HashMap<Box<str>, u32>,
}

impl Table {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.counters.names.len() as u32;
        self.counters.names.push(s.into());
        self.index.insert(s.into(), i);
        i
    }

    fn push(&mut self, node: u32, port: u32, counter: &str, value: u64) {
        let counter = self.id(counter);
        self.row(node, port, counter, value);
    }

    /// A row whose names are numbered already.
    fn row(&mut self, node: u32, port: u32, counter: u32, value: u64) {
        self.counters.rows.push(Row {
            node,
            port,
            counter,
            value,
        });
    }
}

/// The LLR counters of the two directions of `p`'s cable, where they run LLR: the one `p`
/// sends on (its frames, and the ordered sets that come back about them) and the one it
/// receives on (the peer's frames, and the ordered sets `p` answers with).
pub(super) fn llr_directions<'s>(
    sim: &'s Sim,
    p: crate::ids::PortId,
) -> [Option<&'s crate::llr::LlrCounters>; 2] {
    let net = &sim.net;
    let of = |q: crate::ids::PortId| net.llr.get(q.idx()).and_then(|l| l.as_ref()).map(|l| &l.counters);
    let peer = net.peer[p.idx()];
    [
        of(p),
        (peer != crate::ids::PortId::NONE).then(|| of(peer)).flatten(),
    ]
}

/// Port `p`'s link level retry counters, named as SAI's `SAI_PORT_STAT_LLR_*` (lower case):
/// its sender's (the cable leaving it) and its receiver's (the cable from its peer).
fn llr_counters(sim: &Sim, p: crate::ids::PortId, mut push: impl FnMut(&str, u64)) {
    let [sends, receives] = llr_directions(sim, p);
    if let Some(c) = sends {
        for (counter, value) in [
            ("llr_tx_ok", c.tx_ok),
            ("llr_tx_replay", c.tx_replay),
            ("llr_tx_replay_timer", c.tx_replay_timer),
            ("llr_tx_flush", c.tx_flush),
            ("llr_tx_flushed_frames", c.tx_flushed),
            ("llr_tx_held", c.tx_held),
            ("llr_tx_unprotected", c.tx_unprotected),
            ("llr_tx_discard", c.tx_discard),
            ("llr_tx_init_ctl_os", c.tx_init_ctl_os),
            ("llr_rx_ack_ctl_os", c.rx_ack_ctl_os),
            ("llr_rx_nack_ctl_os", c.rx_nack_ctl_os),
            ("llr_rx_init_echo_ctl_os", c.rx_init_echo_ctl_os),
            ("llr_ctl_os_lost", c.ctl_os_lost),
        ] {
            push(counter, value);
        }
    }
    if let Some(c) = receives {
        for (counter, value) in [
            ("llr_rx_ok", c.rx_ok),
            ("llr_rx_bad", c.rx_bad),
            ("llr_rx_expected_seq_good", c.rx_expected_seq_good),
            ("llr_rx_expected_seq_bad", c.rx_expected_seq_bad),
            ("llr_rx_missing_seq", c.rx_missing_seq),
            ("llr_rx_duplicate_seq", c.rx_duplicate_seq),
            ("llr_rx_replay", c.rx_replay),
            ("llr_tx_ack_ctl_os", c.tx_ack_ctl_os),
            ("llr_tx_nack_ctl_os", c.tx_nack_ctl_os),
            ("llr_rx_init_ctl_os", c.rx_init_ctl_os),
            ("llr_tx_init_echo_ctl_os", c.tx_init_echo_ctl_os),
        ] {
            push(counter, value);
        }
    }
}
