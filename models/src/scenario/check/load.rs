//! Load: what an open-loop workload offers the cables it must cross, against what they carry.
//!
//! A `poisson` workload's `load` is a fraction of each source's NIC rate. Whether the fabric
//! can carry it is a question about cuts (the max-flow min-cut theorem, Ford and Fulkerson
//! 1956: no routing carries more across a cut than its capacity): what the hosts of one switch
//! send to hosts elsewhere must leave through that switch's other cables, what they receive
//! from elsewhere must come in through them, and what one host receives comes through its own
//! cable. A leaf with 8 x 100G hosts and 2 x 100G uplinks, its hosts offered 50 %, gets 155 %
//! at its uplinks: the queues behind them grow for as long as the workload lasts, and the FCTs
//! measure that backlog rather than the load written. The rates here are payload (what `load`
//! counts), so a finding is never a false alarm from framing.

use super::{Finding, Level};
use crate::ids::{HostId, NodeId};
use crate::topology::{NodeKind, Topology};
use crate::workload::Offered;
use std::collections::BTreeMap;

/// One cut a workload over-fills: its worst, and how many others.
struct Over {
    ratio: f64,
    what: String,
}

pub fn check(topo: &Topology, offered: &[Offered], out: &mut Vec<Finding>) {
    let n = topo.hosts.len();
    if n < 2 || offered.is_empty() {
        return;
    }
    let cuts = Cuts::of(topo);
    for w in offered {
        let mut over: Vec<Over> = cuts.overfilled(topo, w);
        if over.is_empty() {
            continue;
        }
        over.sort_by(|a, b| b.ratio.total_cmp(&a.ratio));
        let worst = &over[0];
        let more = match over.len() - 1 {
            0 => String::new(),
            1 => " (and 1 more cut like it)".to_string(),
            k => format!(" (and {k} more cuts like it)"),
        };
        let fits = w.load / worst.ratio;
        out.push(Finding {
            level: Level::Warning,
            id: "load-over-capacity",
            key: format!("workload[{}].load", w.index),
            file: None,
            problem: format!(
                "at load {} this workload offers {}, {:.2} times what they carry{more}: the \
                 queues behind them grow for its whole {}, and the FCTs measure that backlog, \
                 not a {} load",
                w.load, worst.what, worst.ratio, w.duration, w.load
            ),
            fix: format!(
                "lower workload[{}].load to {:.2} or less, or give those cables the capacity \
                 (more spines, faster or more fabric links)",
                w.index,
                (fits * 100.0).floor() / 100.0
            ),
        });
    }
}

/// The fabric's cuts: each edge switch's hosts (single-cabled hosts, grouped by their switch)
/// with the capacity of the switch's other cables, and each host's own cable.
struct Cuts {
    /// Switch node -> (its single-cabled hosts, bits/s of its cables to anything else).
    groups: BTreeMap<NodeId, (Vec<HostId>, f64)>,
    /// The hosts of each host's server (other NICs of one server: traffic between them takes
    /// NVLink), when servers have several.
    mates: Vec<Vec<HostId>>,
}

impl Cuts {
    fn of(topo: &Topology) -> Cuts {
        let mut host_of = vec![None; topo.nodes.len()];
        for (h, &node) in topo.hosts.iter().enumerate() {
            host_of[node.idx()] = Some(HostId(h as u32));
        }
        // Each host's cables: exactly one, to a switch, puts it in that switch's group.
        let mut cables = vec![0u32; topo.hosts.len()];
        let mut peer = vec![None; topo.hosts.len()];
        for l in &topo.links {
            for (me, other) in [(l.a, l.b), (l.b, l.a)] {
                if let Some(h) = host_of[me.idx()] {
                    cables[h.idx()] += 1;
                    if topo.nodes[other.idx()].kind == NodeKind::Switch {
                        peer[h.idx()] = Some(other);
                    }
                }
            }
        }
        let mut groups: BTreeMap<NodeId, (Vec<HostId>, f64)> = BTreeMap::new();
        let mut group_of = vec![None; topo.nodes.len()];
        for h in 0..topo.hosts.len() {
            if let (1, Some(sw)) = (cables[h], peer[h]) {
                groups.entry(sw).or_default().0.push(HostId(h as u32));
                group_of[topo.hosts[h].idx()] = Some(sw);
            }
        }
        for l in &topo.links {
            for (me, other) in [(l.a, l.b), (l.b, l.a)] {
                if let Some(g) = groups.get_mut(&me)
                    && group_of[other.idx()] != Some(me)
                {
                    g.1 += l.rate.as_gbps() * 1e9;
                }
            }
        }
        // A switch with nothing else cabled (a star) is no cut.
        groups.retain(|_, (_, cap)| *cap > 0.0);
        let mut mates = vec![Vec::new(); topo.hosts.len()];
        if topo.nvlink.is_some() {
            let mut by_server: BTreeMap<u32, Vec<HostId>> = BTreeMap::new();
            for h in 0..topo.hosts.len() {
                by_server
                    .entry(topo.server[h])
                    .or_default()
                    .push(HostId(h as u32));
            }
            for hosts in by_server.values() {
                for &h in hosts {
                    mates[h.idx()] = hosts.iter().copied().filter(|&m| m != h).collect();
                }
            }
        }
        Cuts { groups, mates }
    }

    /// Every cut `w` offers more than it carries.
    fn overfilled(&self, topo: &Topology, w: &Offered) -> Vec<Over> {
        let n = topo.hosts.len();
        let mut rate = vec![0.0; n];
        for &s in &w.sources {
            rate[s.idx()] = w.load * topo.host_rate(s).as_gbps() * 1e9;
        }
        // Bits/s `src` sends to `dst`, and what of it crosses the fabric (not to a mate).
        let raw = |src: HostId, dst: HostId| -> f64 {
            match w.dst {
                _ if src == dst => 0.0,
                Some(d) => (d == dst) as u8 as f64 * rate[src.idx()],
                None => rate[src.idx()] / (n - 1) as f64,
            }
        };
        let to = |src: HostId, dst: HostId| -> f64 {
            match self.mates[src.idx()].contains(&dst) {
                true => 0.0,
                false => raw(src, dst),
            }
        };
        // What each host receives.
        let total: f64 = rate.iter().sum();
        let recv: Vec<f64> = (0..n as u32)
            .map(HostId)
            .map(|h| match w.dst {
                Some(d) if d != h => 0.0,
                _ => {
                    let mates: f64 = self.mates[h.idx()].iter().map(|m| raw(*m, h)).sum();
                    match w.dst {
                        Some(_) => total - rate[h.idx()] - mates,
                        None => (total - rate[h.idx()]) / (n - 1) as f64 - mates,
                    }
                }
            })
            .collect();
        let gbps = |b: f64| format!("{:.0} Gb/s", b / 1e9);
        let mut over = Vec::new();
        for (h, &r) in recv.iter().enumerate() {
            let cap = topo.host_rate(HostId(h as u32)).as_gbps() * 1e9;
            if r > cap * (1.0 + 1e-9) {
                let name = &topo.nodes[topo.hosts[h].idx()].name;
                over.push(Over {
                    ratio: r / cap,
                    what: format!("{name}'s cable {} in ({} cable)", gbps(r), gbps(cap)),
                });
            }
        }
        for (&sw, (hosts, cap)) in &self.groups {
            // Within the group, summed pair by pair only for a fixed destination or mates;
            // uniform traffic stays inside with probability (|G| - 1 - its mates inside)/(n-1).
            let inside = |src: HostId| -> f64 {
                match w.dst {
                    Some(d) => hosts.contains(&d) as u8 as f64 * to(src, d),
                    None => {
                        let mates = self.mates[src.idx()].iter().filter(|m| hosts.contains(m)).count();
                        rate[src.idx()] * (hosts.len() - 1 - mates) as f64 / (n - 1) as f64
                    }
                }
            };
            let sent: f64 = hosts.iter().map(|&h| rate[h.idx()]).sum();
            let mates_out: f64 = hosts
                .iter()
                .flat_map(|&h| self.mates[h.idx()].iter().map(move |&m| (h, m)))
                .filter(|(_, m)| !hosts.contains(m))
                .map(|(h, m)| raw(h, m))
                .sum();
            let intra: f64 = hosts.iter().map(|&h| inside(h)).sum();
            let leaving = sent - intra - mates_out;
            let arriving = hosts.iter().map(|h| recv[h.idx()]).sum::<f64>() - intra;
            let (dir, worst) = if leaving >= arriving {
                ("out", leaving)
            } else {
                ("in", arriving)
            };
            if worst > cap * (1.0 + 1e-9) {
                let name = &topo.nodes[sw.idx()].name;
                over.push(Over {
                    ratio: worst / cap,
                    what: format!(
                        "{name}'s cables to the rest of the fabric {} {dir} ({} of cables, for \
                         its {} hosts)",
                        gbps(worst),
                        gbps(*cap),
                        hosts.len()
                    ),
                });
            }
        }
        over
    }
}
