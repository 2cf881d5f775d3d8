//! Import of uet-htsim connection matrices (`.cm`), so published htsim experiments replay on
//! this simulator's topologies.
//!
//! The format, as htsim's `ConnectionMatrix::load` reads it:
//!
//! ```text
//! Nodes 128
//! Connections 127
//! Triggers 1                      (optional)
//! 104->33 id 1 start 0 size 2000000 send_done_trigger 1
//! 35->33 id 2 trigger 1 size 2000000
//! trigger id 1 oneshot            (oneshot | multishot | barrier N)
//! ```
//!
//! Node i is host `h{i}`. `start` is in picoseconds; `size` in bytes. A connection with a
//! `trigger` starts when that trigger fires; `send_done_trigger` and `recv_done_trigger` fire
//! a trigger when the connection completes (both are taken as completion at the receiver). A
//! oneshot or multishot trigger fires on its first activation, a barrier after N. `id` and
//! `prio`/`priority` are accepted; `prio` sets the 802.1p priority. Anything else is an error
//! naming the line.

use super::{Deps, FlowSpec};
use crate::ids::HostId;
use sim_core::Time;
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Any,
    Barrier(u32),
}

/// A matrix being read: its connections and triggers, with the line each came from.
#[derive(Default)]
struct Matrix {
    /// The `Nodes` count and its line.
    nodes: Option<(usize, usize)>,
    flows: Vec<FlowSpec>,
    /// The trigger each connection waits for, and its line.
    waits: Vec<Option<u32>>,
    lines: Vec<usize>,
    triggers: HashMap<u32, (Kind, usize)>,
    /// The connections whose completion fires each trigger.
    fires: HashMap<u32, Vec<usize>>,
}

/// Parse a connection matrix for a fabric of `hosts` hosts; data packets at `prio` unless a
/// line says otherwise; no more connections than `cap` (checked as they are read, so a huge
/// matrix is refused before its flows fill memory).
pub fn parse(text: &str, hosts: usize, prio: u8, cap: &super::FlowCap) -> Result<Vec<FlowSpec>, String> {
    let mut m = Matrix::default();
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let at = |e: String| format!("line {line}: {e}");
        let words: Vec<&str> = raw.split_whitespace().collect();
        match words.as_slice() {
            [] | ["Connections", _] | ["Triggers", _] => {}
            ["Nodes", v] => {
                let count = v
                    .parse()
                    .map_err(|_| at(format!("expected a node count, got \"{v}\"")))?;
                m.nodes = Some((count, line));
            }
            ["trigger", "id", id, rest @ ..] => m.trigger(id, rest, line).map_err(at)?,
            [pair, rest @ ..] if pair.contains("->") => {
                if m.flows.len() >= cap.flows {
                    return Err(at(format!("more connections than {}", cap.why)));
                }
                m.connection(pair, rest, hosts, prio, line).map_err(at)?
            }
            _ => return Err(at(format!("cannot read \"{}\"", raw.trim()))),
        }
    }
    let (nodes, line) = m.nodes.ok_or("missing the `Nodes N` line")?;
    if nodes > hosts {
        return Err(format!(
            "line {line}: the matrix has {nodes} nodes but the topology only {hosts} hosts"
        ));
    }
    // Every connection between nodes the matrix declares (htsim indexes arrays by them).
    if let Some((f, &l)) = m
        .flows
        .iter()
        .zip(&m.lines)
        .find(|(f, _)| f.src.idx() >= nodes || f.dst.idx() >= nodes)
    {
        let bad = if f.src.idx() >= nodes {
            f.src.idx()
        } else {
            f.dst.idx()
        };
        return Err(format!(
            "line {l}: node {bad} is not below the `Nodes {nodes}` of line {line}"
        ));
    }
    m.link_triggers()?;
    Ok(m.flows)
}

impl Matrix {
    /// `trigger id N [oneshot | multishot | barrier K]`.
    fn trigger(&mut self, id: &str, rest: &[&str], line: usize) -> Result<(), String> {
        let id: u32 = id
            .parse()
            .map_err(|_| format!("bad trigger id \"{id}\" (a whole number up to {})", u32::MAX))?;
        let kind = match rest {
            ["oneshot"] | ["multishot"] | [] => Kind::Any,
            ["barrier", count] => Kind::Barrier(
                count
                    .parse()
                    .map_err(|_| format!("bad barrier count \"{count}\""))?,
            ),
            other => {
                return Err(format!(
                    "unknown trigger type {other:?} (oneshot, multishot, barrier N)"
                ));
            }
        };
        self.triggers.insert(id, (kind, line));
        Ok(())
    }

    /// `src->dst key value ...`.
    fn connection(
        &mut self,
        pair: &str,
        rest: &[&str],
        hosts: usize,
        prio: u8,
        line: usize,
    ) -> Result<(), String> {
        let (s, d) = pair.split_once("->").expect("the caller found the arrow");
        let node = |v: &str| -> Result<usize, String> {
            let i: usize = v.parse().map_err(|_| format!("bad node \"{v}\" in \"{pair}\""))?;
            if i >= hosts {
                return Err(format!(
                    "node {i} does not exist: the topology has hosts h0..h{}",
                    hosts - 1
                ));
            }
            Ok(i)
        };
        let (src, dst) = (node(s)?, node(d)?);
        if src == dst {
            return Err(format!("a connection from node {src} to itself"));
        }
        if rest.len() % 2 != 0 {
            return Err("expected `key value` pairs after src->dst".into());
        }
        let mut spec = FlowSpec::new(HostId(src as u32), HostId(dst as u32), 0, Time::ZERO, prio);
        let mut wait = None;
        for kv in rest.chunks(2) {
            let num = |v: &str| {
                v.parse::<u64>()
                    .map_err(|_| format!("`{}` needs a whole number, got \"{v}\"", kv[0]))
            };
            let at_most = |v: &str, max: u64, what: &str| {
                num(v).and_then(|n| {
                    if n > max {
                        Err(format!("`{}` {n} is over {max}, the largest {what}", kv[0]))
                    } else {
                        Ok(n)
                    }
                })
            };
            match kv[0] {
                "id" => {
                    at_most(kv[1], u32::MAX as u64, "connection id")?;
                }
                "start" => {
                    spec.start = Time(at_most(
                        kv[1],
                        sim_core::Duration::LIMIT.max,
                        "start (ps) the simulator takes",
                    )?)
                }
                "size" => {
                    spec.size = at_most(
                        kv[1],
                        sim_core::Bytes::LIMIT.max,
                        "size (bytes) the simulator takes",
                    )?
                }
                "prio" | "priority" => spec.prio = at_most(kv[1], 7, "802.1p priority")? as u8,
                "trigger" => wait = Some(at_most(kv[1], u32::MAX as u64, "trigger id")? as u32),
                "send_done_trigger" | "recv_done_trigger" => {
                    let fired = at_most(kv[1], u32::MAX as u64, "trigger id")? as u32;
                    self.fires.entry(fired).or_default().push(self.flows.len());
                }
                k => {
                    return Err(format!(
                        "unknown key `{k}` (id, start, size, prio, trigger, send_done_trigger, recv_done_trigger)"
                    ));
                }
            }
        }
        if spec.size == 0 {
            return Err("missing or zero `size` (htsim's infinite flows are not supported)".into());
        }
        self.flows.push(spec);
        self.waits.push(wait);
        self.lines.push(line);
        Ok(())
    }

    /// Turn each connection's trigger into dependencies on the connections that fire it.
    fn link_triggers(&mut self) -> Result<(), String> {
        for (i, wait) in self.waits.iter().enumerate() {
            let Some(t) = wait else { continue };
            let sources: Vec<u32> = self
                .fires
                .get(t)
                .map(|v| v.iter().map(|&j| j as u32).collect())
                .unwrap_or_default();
            if sources.is_empty() {
                return Err(format!(
                    "line {}: connection {} waits for trigger {t}, which nothing fires",
                    self.lines[i],
                    i + 1
                ));
            }
            let (kind, line) = self
                .triggers
                .get(t)
                .copied()
                .unwrap_or((Kind::Any, self.lines[i]));
            self.flows[i].deps = match kind {
                Kind::Any => Deps::Any(sources),
                Kind::Barrier(count) if count as usize <= sources.len() => Deps::AtLeast(count, sources),
                Kind::Barrier(count) => {
                    return Err(format!(
                        "line {line}: barrier trigger {t} waits for {count} completions but only {} connections fire it",
                        sources.len()
                    ));
                }
            };
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn any() -> super::super::FlowCap {
        super::super::FlowCap::new(0, None, 1)
    }

    #[test]
    fn a_matrix_past_the_cap_is_refused_as_it_is_read() {
        let cap = super::super::FlowCap::new(0, Some((3 * 100, "run.max_memory")), 100);
        let e = parse(
            "Nodes 2\n0->1 size 10\n1->0 size 10\n0->1 size 10\n0->1 size 10\n",
            2,
            3,
            &cap,
        )
        .unwrap_err();
        assert!(
            e.starts_with("line 5: more connections than the 3 that fit"),
            "{e}"
        );
    }

    #[test]
    fn a_small_matrix_imports_to_the_expected_flows() {
        let cm = "Nodes 4\nConnections 3\nTriggers 1\n0->1 id 1 start 2000000 size 4096 send_done_trigger 7\n2->3 id 2 start 0 size 10000\n3->0 id 3 trigger 7 size 500\ntrigger id 7 oneshot\n";
        let f = parse(cm, 8, 3, &any()).unwrap();
        assert_eq!(f.len(), 3);
        assert_eq!(
            (f[0].src, f[0].dst, f[0].size, f[0].start),
            (HostId(0), HostId(1), 4096, Time(2_000_000))
        );
        assert_eq!(f[1].deps, Deps::None);
        assert_eq!(f[2].deps, Deps::Any(vec![0]));
    }

    #[test]
    fn errors_name_the_line() {
        assert!(
            parse("Nodes 2\n0->5 size 10\n", 2, 3, &any())
                .unwrap_err()
                .contains("line 2")
        );
        assert!(
            parse("Nodes 2\n0->1 size 10 colour red\n", 2, 3, &any())
                .unwrap_err()
                .contains("unknown key `colour`")
        );
        assert!(
            parse("Nodes 9\n0->1 size 10\n", 4, 3, &any())
                .unwrap_err()
                .contains("9 nodes")
        );
        assert!(
            parse("Nodes 2\n0->1 trigger 3 size 10\n", 2, 3, &any())
                .unwrap_err()
                .contains("trigger 3")
        );
    }

    #[test]
    fn the_published_permutation_imports() {
        // uet-htsim's perm_128n_128c_2MB.cm, shipped in benches/htsim/.
        let text = include_str!("../../../benches/htsim/perm_128n_128c_2MB.cm");
        let f = parse(text, 128, 3, &any()).unwrap();
        assert_eq!(f.len(), 128);
        assert!(f.iter().all(|x| x.size == 2_000_000 && x.start == Time::ZERO));
        let mut dsts: Vec<u32> = f.iter().map(|x| x.dst.0).collect();
        dsts.sort();
        dsts.dedup();
        assert_eq!(dsts.len(), 128, "a permutation: every node receives once");
    }
}
