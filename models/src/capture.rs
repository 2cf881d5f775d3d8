//! Capture points: a mirror (SPAN) of one switch port or host NIC, as `[[capture]]` in the
//! scenario. The simulation only copies the packets it passes there, with the time, into a
//! bounded list; nothing it does depends on them, so capturing cannot change the results.
//! `crate::pcap` spells them out as frames when the results are written.

use crate::error::FieldError;
use crate::ids::{NodeId, PortId};
use crate::packet::{Kind, Packet};
use crate::topology::Topology;
use serde::Deserialize;
use sim_core::{Duration, Time};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Tx,
    Rx,
    #[default]
    Both,
}

/// `[[capture]]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaptureConfig {
    /// File name stem (default `<node>` or `<node>-<peer>`).
    #[serde(default)]
    pub name: Option<String>,
    /// The switch or host whose port is mirrored.
    pub node: String,
    /// The neighbour the port is cabled to; a host's NIC needs none.
    #[serde(default)]
    pub peer: Option<String>,
    /// Which parallel cable to `peer` (0 = the first).
    #[serde(default)]
    pub cable: usize,
    #[serde(default)]
    pub direction: Direction,
    #[serde(default)]
    pub start: Option<Duration>,
    #[serde(default)]
    pub stop: Option<Duration>,
    /// Bytes kept of each frame (default 65535).
    #[serde(default = "default_snaplen")]
    pub snaplen: u32,
    /// Only these flows (ids as in flows.csv); PFC frames, which belong to no flow, still pass
    /// unless `kinds` leaves them out.
    #[serde(default)]
    pub flows: Option<Vec<u32>>,
    /// Only these packet kinds: `data`, `ack`, `nak`, `cnp`, `pause`, `credit`, `probe`, `llr`
    /// (link level retry's ACK and NACK ordered sets, written as `crate::pcap` frames them).
    #[serde(default)]
    pub kinds: Option<Vec<String>>,
    /// At most this many packets (default 1,000,000); the rest are counted.
    #[serde(default = "default_max")]
    pub max_packets: usize,
}

fn default_snaplen() -> u32 {
    65535
}
fn default_max() -> usize {
    1_000_000
}

const KINDS: [(&str, Kind); 9] = [
    ("data", Kind::Data),
    ("ack", Kind::Ack),
    ("nak", Kind::Nak),
    ("cnp", Kind::Cnp),
    ("pause", Kind::Pause),
    ("credit", Kind::Credit),
    ("probe", Kind::Probe),
    ("cbfc-credit", Kind::LinkCredit),
    ("llr", Kind::LlrCtl),
];

/// A validated capture point.
#[derive(Debug, Clone)]
pub struct CaptureSpec {
    pub name: String,
    pub node: NodeId,
    pub peer: Option<NodeId>,
    pub cable: usize,
    /// The mirrored port.
    pub port: PortId,
    pub direction: Direction,
    pub start: Time,
    pub stop: Time,
    pub snaplen: u32,
    pub flows: Option<Vec<u32>>,
    /// Bit per `Kind` (as u8).
    pub kinds: u8,
    pub max_packets: usize,
}

/// Check every `[[capture]]` against the topology.
pub fn resolve(caps: &[CaptureConfig], t: &Topology) -> Result<Vec<CaptureSpec>, FieldError> {
    let mut out: Vec<CaptureSpec> = Vec::new();
    for (i, c) in caps.iter().enumerate() {
        let key = |k: &str| format!("capture[{i}].{k}");
        let n = t.node_named(key("node"), &c.node)?;
        let peer = peer(c, n, t, &key)?;
        let start = Time::ZERO + c.start.unwrap_or(Duration::ZERO);
        let stop = c.stop.map_or(Time(u64::MAX), |s| Time::ZERO + s);
        if stop <= start {
            return Err(FieldError::new(key("stop"), "must be after `start`"));
        }
        if c.snaplen < 64 {
            return Err(FieldError::new(
                key("snaplen"),
                format!("{} is too short for any header; expected at least 64", c.snaplen),
            ));
        }
        let kinds = kinds(c, &key)?;
        let name = c.name.clone().unwrap_or_else(|| match &c.peer {
            Some(p) if c.cable > 0 => format!("{}-{p}#{}", c.node, c.cable + 1),
            Some(p) => format!("{}-{p}", c.node),
            None => c.node.clone(),
        });
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
            return Err(FieldError::new(
                key("name"),
                "expected a file name stem without slashes",
            ));
        }
        if out.iter().any(|o| o.name == name) {
            return Err(FieldError::new(
                key("name"),
                format!("another capture is already named \"{name}\""),
            ));
        }
        let port = t
            .port_of(n, peer, c.cable)
            .ok_or_else(|| FieldError::new(key("node"), format!("{} has no port to mirror", c.node)))?;
        out.push(CaptureSpec {
            name,
            node: n,
            peer,
            cable: c.cable,
            port,
            direction: c.direction,
            start,
            stop,
            snaplen: c.snaplen,
            flows: c.flows.clone(),
            kinds,
            max_packets: c.max_packets,
        });
    }
    Ok(out)
}

/// The neighbour whose cable the mirrored port of node `n` leads to: required for a switch
/// and for a host with several cables; checked to exist, with the parallel cable named.
fn peer(
    c: &CaptureConfig,
    n: NodeId,
    t: &Topology,
    key: &dyn Fn(&str) -> String,
) -> Result<Option<NodeId>, FieldError> {
    let is_host = matches!(t.nodes[n.idx()].kind, crate::topology::NodeKind::Host);
    let peer = match &c.peer {
        Some(p) => t.node_named(key("peer"), p)?,
        None if is_host => {
            // A host with several cables (a ring) must say which port is mirrored.
            let peers: Vec<&str> = t
                .links
                .iter()
                .filter_map(|l| match (l.a == n, l.b == n) {
                    (true, _) => Some(t.nodes[l.b.idx()].name.as_str()),
                    (_, true) => Some(t.nodes[l.a.idx()].name.as_str()),
                    _ => None,
                })
                .collect();
            if peers.len() > 1 {
                return Err(FieldError::new(
                    key("peer"),
                    format!(
                        "{} has {} ports: name the neighbour the mirrored one is cabled to (one of {})",
                        c.node,
                        peers.len(),
                        peers.join(", ")
                    ),
                ));
            }
            return Ok(None);
        }
        None => {
            return Err(FieldError::new(
                key("peer"),
                format!(
                    "{} is a switch: name the neighbour its mirrored port is cabled to",
                    c.node
                ),
            ));
        }
    };
    let n_cables = t.cables_between(n, peer);
    if n_cables == 0 {
        return Err(FieldError::new(
            key("peer"),
            format!("no cable joins {} and {}", c.node, t.nodes[peer.idx()].name),
        ));
    }
    if c.cable >= n_cables {
        return Err(FieldError::new(
            key("cable"),
            format!(
                "{} and {} are joined by {n_cables} cable(s); cable is 0-based",
                c.node,
                t.nodes[peer.idx()].name
            ),
        ));
    }
    Ok(Some(peer))
}

/// The kinds kept, as a bit per [`Kind`] (all when none are named).
fn kinds(c: &CaptureConfig, key: &dyn Fn(&str) -> String) -> Result<u8, FieldError> {
    let Some(list) = &c.kinds else {
        return Ok(0xff);
    };
    let mut m = 0u8;
    for k in list {
        let (_, kind) = KINDS.iter().find(|(n, _)| n == k).ok_or_else(|| {
            FieldError::new(
                key("kinds"),
                format!(
                    "unknown kind \"{k}\"; expected some of data, ack, nak, cnp, pause, credit, probe, llr, cbfc-credit"
                ),
            )
        })?;
        m |= 1 << *kind as u8;
    }
    Ok(m)
}

/// One captured frame: when, which way, what.
#[derive(Debug, Clone, Copy)]
pub struct Record {
    pub at: Time,
    /// The port that sent it onto the cable.
    pub sender: u32,
    pub pkt: Packet,
    /// Its INT records (index + 1 into [`Capture::ints`]; 0: none).
    pub int: u32,
}

/// A capture point at run time.
#[derive(Debug, Clone)]
pub struct Capture {
    pub spec: CaptureSpec,
    /// The mirrored port and the port at the other end of its cable.
    pub port: PortId,
    pub peer_port: PortId,
    pub records: Vec<Record>,
    /// The INT records of captured frames that carry them, as they were on the wire.
    pub ints: Vec<crate::int::IntStack>,
    /// Frames that matched after `max_packets`.
    pub cut: u64,
}

impl Capture {
    /// The INT records `rec` carried.
    pub fn int_of(&self, rec: &Record) -> Option<&crate::int::IntStack> {
        (rec.int != 0).then(|| &self.ints[rec.int as usize - 1])
    }

    pub fn new(spec: CaptureSpec, port: PortId, peer_port: PortId) -> Capture {
        Capture {
            spec,
            port,
            peer_port,
            records: Vec::new(),
            ints: Vec::new(),
            cut: 0,
        }
    }

    /// The port sent (`tx`) or received a frame at `at`.
    pub fn observe(&mut self, at: Time, tx: bool, pkt: &Packet, int: Option<&crate::int::IntStack>) {
        let s = &self.spec;
        let dir_ok = match s.direction {
            Direction::Both => true,
            Direction::Tx => tx,
            Direction::Rx => !tx,
        };
        if !dir_ok || at < s.start || at >= s.stop || s.kinds & (1 << pkt.kind as u8) == 0 {
            return;
        }
        let flowless = matches!(pkt.kind, Kind::Pause | Kind::LinkCredit | Kind::LlrCtl);
        if !flowless && s.flows.as_ref().is_some_and(|f| !f.contains(&pkt.flow.0)) {
            return;
        }
        if self.records.len() >= s.max_packets {
            self.cut += 1;
            return;
        }
        let sender = if tx { self.port.0 } else { self.peer_port.0 };
        let int = match int {
            Some(stack) => {
                self.ints.push(*stack);
                self.ints.len() as u32
            }
            None => 0,
        };
        self.records.push(Record {
            at,
            sender,
            pkt: *pkt,
            int,
        });
    }
}
