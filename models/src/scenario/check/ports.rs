//! A SONiC file against the fabric it configures: its `PORT` table against each switch's
//! cables, and what the import does not act on (one note per table).
//!
//! Cables take the file's ports in order: a switch's cables, in the order the topology
//! lists them, each take the first port of the same speed not yet taken (as a user cables a
//! box from its first port). A cable that finds none is a mismatch: the file describes a
//! different box, or the scenario a different cabling.

use super::{Fabric, Finding, Level, Scope};
use crate::topology::Topology;

/// The cables of switch number `switch`, as (peer name, rate in Mb/s) in port order.
fn cables(topo: &Topology, fabric: &Fabric, switch: usize) -> Vec<(String, u64)> {
    let node = fabric.switch_node[switch];
    fabric.cables[switch]
        .iter()
        .map(|&i| {
            let l = &topo.links[i as usize];
            let peer = if l.a.idx() == node { l.b } else { l.a };
            (topo.node_name(peer).to_string(), l.rate.0 / 1_000_000)
        })
        .collect()
}

/// "56 at 25G, 8 at 100G".
fn speeds(mbps: impl Iterator<Item = Option<u64>>) -> String {
    let mut by: std::collections::BTreeMap<Option<u64>, usize> = Default::default();
    for s in mbps {
        *by.entry(s).or_default() += 1;
    }
    by.iter()
        .map(|(s, n)| match s {
            Some(s) if s % 1000 == 0 => format!("{n} at {}G", s / 1000),
            Some(s) => format!("{n} at {s}M"),
            None => format!("{n} without a speed"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn check(topo: &Topology, fabric: &Fabric, s: &Scope, out: &mut Vec<Finding>) {
    let Some(info) = s.sonic else { return };
    for w in &info.imported.warnings {
        let (key, what) = w.split_once(": ").unwrap_or(("(file)", w.as_str()));
        out.push(Finding {
            level: Level::Note,
            id: "sonic-not-modelled",
            key: key.to_string(),
            file: Some(info.file.clone()),
            problem: what.to_string(),
            fix: "nothing to do unless the run needs it: docs/sonic.md lists what the import reads".into(),
        });
    }
    let ports = &info.imported.ports;
    if ports.is_empty() {
        return;
    }
    let mut missing = Vec::new();
    let mut cables_mbps = Vec::new();
    for &sw in &s.switches {
        let c = cables(topo, fabric, sw);
        let rates: Vec<u64> = c.iter().map(|(_, m)| *m).collect();
        let taken = info.imported.ports_for(&rates);
        let name = topo.nodes[fabric.switch_node[sw]].name.as_str();
        for ((peer, mbps), port) in c.iter().zip(taken) {
            if port.is_none() {
                missing.push(format!("{name}'s cable to {peer} ({}G)", *mbps as f64 / 1000.0));
            }
        }
        cables_mbps.extend(rates.into_iter().map(Some));
    }
    if missing.is_empty() {
        return;
    }
    out.push(Finding {
        level: Level::Warning,
        id: "sonic-ports",
        key: "PORT".into(),
        file: Some(info.file.clone()),
        problem: format!(
            "the file's PORT table ({} ports: {}) does not fit the cables of {} ({}): {} find no free port of their speed. The simulated switch runs its cables at the scenario's rates, so its buffers and headroom are not the ones this box computes for its own ports",
            ports.len(),
            speeds(ports.iter().map(|p| p.speed_mbps)),
            s.who(topo),
            speeds(cables_mbps.into_iter()),
            super::listed(&missing, 4, ", ")
        ),
        fix: "give the scenario's cables the box's port speeds (topology host_link / fabric_link rates), or export the config_db.json of the box the scenario describes".into(),
    });
}

/// The FEC the files give their ports, against the cables' other ends
/// (`crate::scenario::port_fec`): a cable whose ends differ never comes up (a warning, one
/// per file), and a file that turns FEC on where the scenario left it open adds its decoder
/// to every hop of those cables (a note, one per file and mode).
pub fn check_fec(topo: &Topology, v: &crate::scenario::Variant, out: &mut Vec<Finding>) {
    use crate::scenario::port_fec::FileEnd;
    use std::collections::BTreeMap;
    let cables = crate::scenario::port_fec::cables(topo, v);
    let mut down: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut on: BTreeMap<(&str, crate::fec::Fec), (usize, sim_core::Duration)> = BTreeMap::new();
    for c in &cables {
        let l = &topo.links[c.link];
        let side = |e: &Option<FileEnd>, node| match e {
            Some(e) => format!("{} {} runs {}", e.switch, e.port, e.fec.name()),
            None if l.fec_stated => format!(
                "{} runs {} (the scenario's fec)",
                topo.node_name(node),
                l.errors.fec.fec.name()
            ),
            None => format!("{} follows", topo.node_name(node)),
        };
        let first = c.ends.iter().flatten().next().expect("a file sets an end");
        match c.result {
            None => down.entry(first.file.as_str()).or_default().push(format!(
                "{}, {}",
                side(&c.ends[0], l.a),
                side(&c.ends[1], l.b)
            )),
            Some(f) if f != l.errors.fec.fec => {
                let e = on.entry((first.file.as_str(), f)).or_default();
                (e.0, e.1) = (e.0 + 1, f.latency(l.rate));
            }
            Some(_) => {}
        }
    }
    for (file, cables) in down {
        out.push(Finding {
            level: Level::Warning,
            id: "fec-mismatch",
            key: "PORT.*.fec".into(),
            file: Some(file.to_string()),
            problem: format!(
                "{} cable{} never come{} up, the two ends running different FEC modes: {}; \
                 traffic routes around them, and a host whose only cable it is cannot send or \
                 receive",
                cables.len(),
                if cables.len() == 1 { "" } else { "s" },
                if cables.len() == 1 { "s" } else { "" },
                super::listed(&cables, 3, "; "),
            ),
            fix: "give both ends the same mode: the port's fec in the file (rs, none), or the \
                  cable's fec in the scenario (or leave it out: an end without one follows the \
                  file's, as with auto-negotiation)"
                .into(),
        });
    }
    for ((file, fec), (n, latency)) in on {
        out.push(Finding {
            level: Level::Note,
            id: "sonic-fec",
            key: "PORT.*.fec".into(),
            file: Some(file.to_string()),
            problem: format!(
                "the file's ports run {} on {n} cable{} whose other end follows: each hop \
                 over them takes {:.1} ns more (the decoder's codewords), and their pre-FEC \
                 bit errors are corrected as the code does",
                fec.name(),
                if n == 1 { "" } else { "s" },
                latency.as_ns_f64()
            ),
            fix: "nothing to do if the box runs it; fec = \"none\" on the cable (or in the \
                  file) runs without it"
                .into(),
        });
    }
}
