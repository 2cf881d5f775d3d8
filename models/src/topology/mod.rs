//! Topologies users describe in `[topology]`, expanded into nodes and links.
//!
//! * `back-to-back`: two hosts on one cable (a 100G DAC between two ConnectX NICs).
//! * `ring`: N hosts, each cabled to its two neighbours, no switch (3 hosts: a full mesh).
//!   Hosts forward transit traffic, as a Linux box with `ip_forward` would.
//! * `star`: N hosts on one switch.
//! * `chain`: switches in a line, each with its own hosts (the parking lot).
//! * `dumbbell`: two switches joined by one bottleneck cable, N hosts on each side: the
//!   classic congestion-control test bed (DCQCN and DCTCP papers evaluate on it).
//! * `leaf-spine`: two tiers (Clos), every leaf cabled to every spine; host and uplink rates
//!   may differ (e.g. AS7326-56X: 48x25G down, 8x100G up).
//! * `fat-tree`: the k-ary three-tier fat tree of Al-Fares, Loukissas and Vahdat ("A scalable,
//!   commodity data center network architecture", SIGCOMM 2008): k pods of k/2 edge and k/2
//!   aggregation switches, (k/2)^2 cores, k^3/4 hosts.
//! * `rail`: rail-optimised scalable units of multi-NIC servers, as NVIDIA's DGX SuperPOD
//!   reference architectures cable them (`rail.rs`).
//! * `htsim`: a uet-htsim `.topo` file's fat tree or leaf-spine (`htsim_topo.rs`).
//! * `graph`: any cabling, node by node and cable by cable, inline or from an edge-list file
//!   ([`graph`]).

use crate::error::FieldError;
use crate::ids::NodeId;
use crate::link::cable_delay;
use serde::Deserialize;
use sim_core::{BitRate, Duration, Length};

/// One cable type: rate and either a propagation delay or a cable length (5 ns/m).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub rate: BitRate,
    #[serde(default)]
    pub delay: Option<Duration>,
    #[serde(default)]
    pub cable: Option<Length>,
    /// Probability that a frame is corrupted on this cable (each direction), e.g. 1e-4.
    #[serde(default)]
    pub loss: f64,
    /// Bit error rate after FEC: a frame of b bits is lost with probability 1-(1-ber)^b.
    #[serde(default)]
    pub ber: f64,
    /// FEC at the ends (`crate::fec`): "none", "rs-528", "rs-544", or each end's own
    /// `[a's, b's]`; ends that differ keep the cable down.
    #[serde(default)]
    pub fec: Option<crate::fec::FecEnds>,
    /// Bit error rate before FEC: frames are lost as the FEC leaves them (`crate::fec`).
    #[serde(default)]
    pub pre_fec_ber: f64,
    /// Latency the FEC adds per hop (default: the codewords its decoder must hold).
    #[serde(default)]
    pub fec_latency: Option<Duration>,
    /// UE link level retry (`crate::llr`): `true`, each end's own `[a's, b's]`, or a table
    /// `{ buffer, frames, replay_timer, replay_count }`.
    #[serde(default)]
    pub llr: Option<crate::llr::LlrCable>,
}

impl LinkConfig {
    /// A cable of `rate` with propagation `delay` and nothing else.
    pub fn plain(rate: BitRate, delay: Duration) -> LinkConfig {
        LinkConfig {
            rate,
            delay: Some(delay),
            cable: None,
            loss: 0.0,
            ber: 0.0,
            fec: None,
            pre_fec_ber: 0.0,
            fec_latency: None,
            llr: None,
        }
    }

    /// The FEC both ends run (None: they differ, the cable stays down).
    pub fn agreed_fec(&self) -> Option<crate::fec::Fec> {
        self.fec.map_or(Some(crate::fec::Fec::None), |f| f.agreed())
    }

    /// Propagation plus the FEC's latency per hop.
    fn hop_delay(&self, propagation: Duration) -> Duration {
        let fec = self.agreed_fec().unwrap_or_default();
        propagation + self.fec_latency.unwrap_or_else(|| fec.latency(self.rate))
    }

    /// The propagation delay, from `delay` or `cable`.
    pub fn delay(&self, key: &str) -> Result<Duration, FieldError> {
        if !(0.0..1e-3).contains(&self.pre_fec_ber) {
            return Err(FieldError::new(
                format!("{key}.pre_fec_ber"),
                format!("must be in [0, 1e-3), got {}", self.pre_fec_ber),
            ));
        }
        if self.pre_fec_ber > 0.0 && self.ber > 0.0 {
            return Err(FieldError::new(
                format!("{key}.pre_fec_ber"),
                "give either `ber` (after FEC) or `pre_fec_ber` (before it, with `fec`), not both",
            ));
        }
        if self.fec_latency.is_some() && self.agreed_fec().unwrap_or_default() == crate::fec::Fec::None {
            return Err(FieldError::new(
                format!("{key}.fec_latency"),
                "is the latency of an FEC both ends run: set `fec` too",
            ));
        }
        if !(0.0..1e-3).contains(&self.ber) {
            return Err(FieldError::new(
                format!("{key}.ber"),
                format!("must be in [0, 1e-3), got {}", self.ber),
            ));
        }
        if !(0.0..1.0).contains(&self.loss) {
            return Err(FieldError::new(
                format!("{key}.loss"),
                format!("must be in [0, 1), got {}", self.loss),
            ));
        }
        match (self.delay, self.cable) {
            (Some(Duration::ZERO), None) => Err(FieldError::new(
                format!("{key}.delay"),
                "must be greater than zero (signals take 5 ns per metre of cable)",
            )),
            (None, Some(len)) if cable_delay(len) == Duration::ZERO => Err(FieldError::new(
                format!("{key}.cable"),
                format!("must be longer than zero, got {len}"),
            )),
            (Some(d), None) => Ok(d),
            (None, Some(len)) => Ok(cable_delay(len)),
            (Some(_), Some(_)) => Err(FieldError::new(key, "give either `delay` or `cable`, not both")),
            (None, None) => Err(FieldError::new(
                key,
                "missing the propagation delay: give `delay = \"1us\"` or a cable length `cable = \"3m\"`",
            )),
        }
    }
}

/// `[topology]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum TopologyConfig {
    BackToBack {
        link: LinkConfig,
    },
    Ring {
        hosts: u32,
        link: LinkConfig,
    },
    Star {
        hosts: u32,
        host_link: LinkConfig,
    },
    /// Switches `sw0..` cabled in a ring (a metro or campus ring), each with its own hosts.
    SwitchRing {
        switches: u32,
        hosts_per_switch: u32,
        host_link: LinkConfig,
        ring_link: LinkConfig,
    },
    /// Switches `sw0..` in a line, each cabled to the next, each with its own hosts: the
    /// "parking lot" of multi-bottleneck fairness studies (a flow from the first switch to the
    /// last crosses every cable of the chain; Bertsekas and Gallager, Data Networks, 6.5).
    Chain {
        switches: u32,
        hosts_per_switch: u32,
        host_link: LinkConfig,
        chain_link: LinkConfig,
    },
    Dumbbell {
        hosts_per_side: u32,
        host_link: LinkConfig,
        bottleneck_link: LinkConfig,
    },
    LeafSpine {
        leaves: u32,
        spines: u32,
        hosts_per_leaf: u32,
        host_link: LinkConfig,
        fabric_link: LinkConfig,
        /// Parallel cables between each leaf and each spine.
        #[serde(default = "one")]
        links_per_spine: u32,
    },
    FatTree {
        k: u32,
        host_link: LinkConfig,
        fabric_link: LinkConfig,
    },
    /// Scalable units of servers with `nics_per_host` NICs, one leaf per rail per unit.
    Rail {
        units: u32,
        servers_per_unit: u32,
        nics_per_host: u32,
        spines: u32,
        host_link: LinkConfig,
        fabric_link: LinkConfig,
        #[serde(default = "one")]
        links_per_spine: u32,
        /// GPU-to-GPU bandwidth inside a server, each way (default NVLink 4 on H100: 450 GB/s).
        #[serde(default)]
        nvlink: Option<BitRate>,
    },
    /// A uet-htsim `.topo` fat tree or leaf-spine.
    Htsim {
        file: String,
    },
    /// Any cabling: `nodes` and `links` here, or an edge-list `file`.
    Graph {
        #[serde(default)]
        nodes: Vec<graph::GraphNode>,
        #[serde(default)]
        links: Vec<graph::GraphLink>,
        #[serde(default)]
        file: Option<String>,
        /// Between the ports of one server (`server` on its hosts; default 3600 Gbps).
        #[serde(default)]
        nvlink: Option<BitRate>,
    },
}

fn one() -> u32 {
    1
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch,
}

#[derive(Debug, Clone)]
pub struct NodeSpec {
    pub name: String,
    pub kind: NodeKind,
    /// A graph's switch may name its ASIC profile (over `[switch]`'s).
    pub asic: Option<crate::asic::Asic>,
}

/// A full-duplex cable between nodes `a` and `b`.
#[derive(Debug, Clone)]
pub struct LinkSpec {
    pub a: NodeId,
    pub b: NodeId,
    pub rate: BitRate,
    pub delay: Duration,
    /// How it loses frames: `loss`, `ber` after FEC, bit errors before the FEC both ends run.
    pub errors: crate::link::Errors,
    /// False when the ends' FEC modes differ: the cable never comes up.
    pub up: bool,
    /// The scenario gives the cable's FEC (`fec`); else its ends follow what a switch's SONiC
    /// file sets for its port (`crate::scenario::port_fec`).
    pub fec_stated: bool,
    /// Link level retry, when both ends run it (`crate::llr`): each end's profile (`a`, `b`).
    pub llr: Option<Box<[crate::llr::LlrConfig; 2]>>,
    /// Each end's LLR as the scenario's `llr` states it (None: it says nothing).
    pub llr_ends: Option<[bool; 2]>,
}

/// Cables whose ends run different FEC modes, by the key that configured them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FecMismatch {
    pub key: String,
    pub ends: [crate::fec::Fec; 2],
}

/// The expanded graph.
#[derive(Debug, Clone, Default)]
pub struct Topology {
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    /// `hosts[i]` is the node of host `h{i}`.
    pub hosts: Vec<NodeId>,
    /// Hosts forward packets that are not theirs (switchless rings).
    pub hosts_forward: bool,
    /// The server each host (NIC port) belongs to: its own index unless servers have several
    /// NICs (`rail`).
    pub server: Vec<u32>,
    /// Bandwidth between two GPUs of one server, each way, when servers have several NICs:
    /// traffic between a server's own NICs takes NVLink, not the fabric.
    pub nvlink: Option<BitRate>,
    /// Rate of each node's first cable (for a host, its NIC's line rate), 0 without one.
    first_rate: Vec<BitRate>,
    /// Cables that never come up because their ends' FEC modes differ.
    pub fec_mismatches: Vec<FecMismatch>,
    /// Cables of 25G and up with bit errors before FEC and no FEC: (key, rate, bit error rate).
    pub unprotected: Vec<(String, BitRate, f64)>,
    /// Cables whose LLR settings call for a finding, by the key that configured them.
    pub llr_notes: Vec<(String, crate::llr::LlrNote)>,
}

/// Largest fabric we agree to build (nodes), to turn typos like `k = 4000` into errors.
const MAX_NODES: u64 = 2_000_000;
/// Largest number of cables we agree to build.
const MAX_LINKS: u64 = 8_000_000;

impl Topology {
    /// The node called `name`, or an error for `key` that says how nodes are named.
    pub fn node_named(&self, key: String, name: &str) -> Result<NodeId, FieldError> {
        self.nodes.iter().position(|n| n.name == name).map(|p| NodeId(p as u32)).ok_or_else(|| {
            FieldError::new(key, format!("no node named \"{name}\" (nodes are named like h0, sw0, leaf0, spine0, edge0-0, agg0-0, core0)"))
        })
    }

    /// The id the fabric gives the port of `node` cabled to `peer` (its `nth` such cable; any
    /// neighbour when `peer` is None). Ports are numbered node by node, each node's in the
    /// order its cables are listed, as [`crate::network::Network::build`] lays them out.
    pub fn port_of(&self, node: NodeId, peer: Option<NodeId>, nth: usize) -> Option<crate::ids::PortId> {
        let first: usize = self
            .links
            .iter()
            .map(|l| (l.a.0 < node.0) as usize + (l.b.0 < node.0) as usize)
            .sum();
        let far = |l: &LinkSpec| match (l.a == node, l.b == node) {
            (true, _) => Some(l.b),
            (_, true) => Some(l.a),
            _ => None,
        };
        self.links
            .iter()
            .filter_map(far)
            .enumerate()
            .filter(|(_, f)| peer.is_none_or(|p| p == *f))
            .nth(nth)
            .map(|(i, _)| crate::ids::PortId((first + i) as u32))
    }

    /// Cables joining `a` and `b`.
    pub fn cables_between(&self, a: NodeId, b: NodeId) -> usize {
        self.links
            .iter()
            .filter(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a))
            .count()
    }

    /// A star of `n` hosts on 100G, 10 ns links (unit tests).
    #[cfg(test)]
    pub(crate) fn test_star(n: u32) -> Topology {
        let link = LinkConfig::plain(BitRate::gbps(100), Duration::from_ns(10));
        TopologyConfig::Star {
            hosts: n,
            host_link: link,
        }
        .build()
        .unwrap()
    }

    fn add(&mut self, name: String, kind: NodeKind) -> NodeId {
        let id = NodeId(self.nodes.len() as u32);
        self.nodes.push(NodeSpec {
            name,
            kind,
            asic: None,
        });
        self.first_rate.push(BitRate(0));
        if kind == NodeKind::Host {
            self.server.push(self.hosts.len() as u32);
            self.hosts.push(id);
        }
        id
    }

    /// `l`'s propagation delay, checked under `key`; its FEC ends noted if they differ.
    fn cable_delay(&mut self, key: &str, l: &LinkConfig) -> Result<Duration, FieldError> {
        let d = l.delay(key)?;
        if let Some(llr) = &l.llr {
            llr.resolve(key, l.rate, l.hop_delay(d))?;
            let key = format!("{key}.llr");
            if let Some(note) = llr.note()
                && !self.llr_notes.iter().any(|n| n.0 == key)
            {
                self.llr_notes.push((key, note));
            }
        }
        if let Some(crate::fec::FecEnds::Each(ends)) = l.fec
            && ends[0] != ends[1]
        {
            let key = format!("{key}.fec");
            if !self.fec_mismatches.iter().any(|m| m.key == key) {
                self.fec_mismatches.push(FecMismatch { key, ends });
            }
        }
        if l.pre_fec_ber > 0.0
            && l.agreed_fec() == Some(crate::fec::Fec::None)
            && l.rate.as_gbps() >= 25.0
            && !self.unprotected.iter().any(|u| u.0 == key)
        {
            self.unprotected.push((key.to_string(), l.rate, l.pre_fec_ber));
        }
        Ok(d)
    }

    fn connect(&mut self, a: NodeId, b: NodeId, l: &LinkConfig, delay: Duration) {
        for end in [a, b] {
            if self.first_rate[end.idx()].0 == 0 {
                self.first_rate[end.idx()] = l.rate;
            }
        }
        let fec = l.agreed_fec();
        let hop = l.hop_delay(delay);
        let llr = l.llr.and_then(|c| c.resolve("", l.rate, hop).ok().flatten());
        let llr = llr.map(|c| Box::new([c, c]));
        self.links.push(LinkSpec {
            a,
            b,
            rate: l.rate,
            delay: hop,
            errors: crate::link::Errors {
                loss: l.loss,
                ber: l.ber,
                fec: crate::fec::BitErrors::new(l.pre_fec_ber, fec.unwrap_or_default()),
            },
            up: fec.is_some(),
            fec_stated: l.fec.is_some(),
            llr,
            llr_ends: l.llr.map(|c| c.ends),
        });
    }

    fn add_hosts(&mut self, n: u32) -> Vec<NodeId> {
        (0..n)
            .map(|_| self.add(format!("h{}", self.hosts.len()), NodeKind::Host))
            .collect()
    }

    /// `hosts` new hosts, then a switch `name` cabled to each of them.
    fn add_edge_switch(&mut self, name: String, hosts: u32, link: &LinkConfig, delay: Duration) -> NodeId {
        let hosts = self.add_hosts(hosts);
        let sw = self.add(name, NodeKind::Switch);
        for h in hosts {
            self.connect(h, sw, link, delay);
        }
        sw
    }

    /// Rate of the first cable of host `h` (its NIC's line rate).
    pub fn host_rate(&self, h: crate::ids::HostId) -> BitRate {
        match self.first_rate[self.hosts[h.idx()].idx()] {
            BitRate(0) => BitRate(1),
            r => r,
        }
    }

    /// True when hosts `a` and `b` are NICs of one server (their traffic takes NVLink).
    pub fn same_server(&self, a: crate::ids::HostId, b: crate::ids::HostId) -> bool {
        self.nvlink.is_some() && self.server[a.idx()] == self.server[b.idx()]
    }

    /// The host called `name` (hosts of the built-in shapes are h0, h1, ...).
    pub fn host_named(&self, name: &str) -> Option<crate::ids::HostId> {
        let fast = name.strip_prefix('h').and_then(|n| n.parse::<usize>().ok());
        if let Some(i) = fast.filter(|&i| {
            self.hosts
                .get(i)
                .is_some_and(|&n| self.nodes[n.idx()].name == name)
        }) {
            return Some(crate::ids::HostId(i as u32));
        }
        self.hosts
            .iter()
            .position(|&n| self.nodes[n.idx()].name == name)
            .map(|i| crate::ids::HostId(i as u32))
    }

    pub fn node_name(&self, n: NodeId) -> &str {
        &self.nodes[n.idx()].name
    }
}

fn at_least(key: &str, v: u32, min: u32) -> Result<(), FieldError> {
    if v < min {
        Err(FieldError::new(key, format!("must be at least {min}, got {v}")))
    } else {
        Ok(())
    }
}

fn size_check(nodes: u128) -> Result<(), FieldError> {
    if nodes > MAX_NODES as u128 {
        return Err(FieldError::new(
            "topology",
            format!("{nodes} nodes is more than the {MAX_NODES} supported"),
        ));
    }
    Ok(())
}

/// Refuse, naming `key`, a fabric of more than [`MAX_LINKS`] cables.
fn links_check(key: &str, links: u128) -> Result<(), FieldError> {
    if links > MAX_LINKS as u128 {
        return Err(FieldError::new(
            key,
            format!("{links} cables is more than the {MAX_LINKS} supported"),
        ));
    }
    Ok(())
}

mod build;
mod clos;
pub mod graph;
mod htsim_topo;
mod rail;

#[cfg(test)]
mod tests {
    use super::*;

    fn link(rate: &str) -> LinkConfig {
        LinkConfig::plain(BitRate::parse(rate).unwrap(), Duration::from_ns(100))
    }

    fn degree(t: &Topology, n: NodeId) -> usize {
        t.links.iter().filter(|l| l.a == n || l.b == n).count()
    }

    #[test]
    fn fat_tree_has_textbook_counts() {
        for k in [2u32, 4, 8] {
            let t = TopologyConfig::FatTree {
                k,
                host_link: link("100Gbps"),
                fabric_link: link("100Gbps"),
            }
            .build()
            .unwrap();
            assert_eq!(t.hosts.len() as u32, k * k * k / 4);
            let switches = t.nodes.iter().filter(|n| n.kind == NodeKind::Switch).count() as u32;
            assert_eq!(switches, 5 * k * k / 4);
            // Every switch has exactly k ports.
            for (i, n) in t.nodes.iter().enumerate() {
                if n.kind == NodeKind::Switch {
                    assert_eq!(degree(&t, NodeId(i as u32)), k as usize, "{}", n.name);
                }
            }
        }
    }

    #[test]
    fn leaf_spine_rates_differ_by_tier() {
        let t = TopologyConfig::LeafSpine {
            leaves: 2,
            spines: 4,
            hosts_per_leaf: 3,
            host_link: link("25Gbps"),
            fabric_link: link("100Gbps"),
            links_per_spine: 2,
        }
        .build()
        .unwrap();
        assert_eq!(t.hosts.len(), 6);
        assert_eq!(t.links.iter().filter(|l| l.rate == BitRate::gbps(25)).count(), 6);
        assert_eq!(
            t.links.iter().filter(|l| l.rate == BitRate::gbps(100)).count(),
            2 * 4 * 2
        );
    }

    #[test]
    fn link_needs_exactly_one_delay_source() {
        let both = LinkConfig {
            cable: Some(Length(1)),
            ..LinkConfig::plain(BitRate::gbps(1), Duration(1))
        };
        assert!(both.delay("x").unwrap_err().message.contains("not both"));
        let none = LinkConfig {
            delay: None,
            ..LinkConfig::plain(BitRate::gbps(1), Duration(1))
        };
        assert!(none.delay("x").unwrap_err().message.contains("cable"));
    }

    #[test]
    fn bad_numbers_name_their_key() {
        let e = TopologyConfig::FatTree {
            k: 3,
            host_link: link("1Gbps"),
            fabric_link: link("1Gbps"),
        }
        .build()
        .unwrap_err();
        assert_eq!(e.path, "topology.k");
        let e = TopologyConfig::Ring {
            hosts: 2,
            link: link("1Gbps"),
        }
        .build()
        .unwrap_err();
        assert_eq!(e.path, "topology.hosts");
    }
}
