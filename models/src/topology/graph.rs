//! `kind = "graph"`: a fabric as it is cabled, node by node and cable by cable, written in the
//! scenario (`nodes`, `links`) or in an edge-list file (`file`).
//!
//! Nodes are hosts or switches (a switch may name its ASIC profile, as `[switch.tier.<name>]
//! asic` would); links join two nodes by name with a rate, a propagation delay or cable
//! length, and a count of parallel cables. Routing is by shortest paths with ECMP over equal
//! costs, as on every topology. A host is one NIC port with one cable; hosts naming the same
//! `server` are the ports of one multi-NIC server. In a fabric with switches a host's cable
//! goes to a switch, or straight to one other host whose only cable it is (a DAC between two
//! servers' second ports); a graph without switches (a DAC pair, a ring of hosts) has its
//! hosts forward frames, as Linux boxes with `ip_forward` do.
//!
//! The edge-list file, one statement per line (`#` starts a comment):
//!
//! ```text
//! switch leaf0 trident3      # a switch, optionally its ASIC profile
//! host nas gpu0 gpu1         # hosts, in order (h0, h1, ... by index)
//! nas leaf0 25Gbps 3m        # a cable: two nodes, rate, cable length or delay
//! leaf0 spine0 100Gbps 10m x2  # two parallel cables
//! ```

use super::{LinkConfig, NodeKind, Topology};
use crate::asic::Asic;
use crate::error::FieldError;
use serde::Deserialize;
use sim_core::{BitRate, Duration, Length};
use std::collections::HashMap;
use std::path::Path;

/// One node as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphNode {
    pub name: String,
    pub kind: GraphKind,
    /// A switch's ASIC profile (default `[switch]`'s).
    #[serde(default)]
    pub asic: Option<Asic>,
    /// Hosts naming one server are that server's NIC ports: their traffic to each other stays
    /// inside it (`nvlink`), not on the fabric.
    #[serde(default)]
    pub server: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GraphKind {
    Host,
    Switch,
}

/// One cable type between two nodes, as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphLink {
    pub a: String,
    pub b: String,
    pub rate: BitRate,
    #[serde(default)]
    pub delay: Option<Duration>,
    #[serde(default)]
    pub cable: Option<Length>,
    #[serde(default)]
    pub loss: f64,
    #[serde(default)]
    pub ber: f64,
    /// FEC at the ends, as a cable's `fec` (`crate::fec`).
    #[serde(default)]
    pub fec: Option<crate::fec::FecEnds>,
    #[serde(default)]
    pub pre_fec_ber: f64,
    #[serde(default)]
    pub fec_latency: Option<Duration>,
    /// Link level retry, as a cable's `llr` (`crate::llr`).
    #[serde(default)]
    pub llr: Option<crate::llr::LlrCable>,
    /// Parallel cables (a LAG, or a breakout's lanes cabled to one switch).
    #[serde(default = "one")]
    pub count: u32,
}

fn one() -> u32 {
    1
}

/// Where a node or link was written, for errors: `("nodes" | "links", index)` to a key.
type Place = Box<dyn Fn(&str, usize) -> String>;

/// Most parallel cables one link line may ask for.
const MAX_COUNT: u32 = 1024;

/// The graph's nodes and links, from the scenario or from `file` (relative to `dir`).
pub fn build(
    t: &mut Topology,
    nodes: &[GraphNode],
    links: &[GraphLink],
    file: Option<&str>,
    nvlink: Option<BitRate>,
    dir: &Path,
) -> Result<(), FieldError> {
    let (nodes, links, at): (Vec<GraphNode>, Vec<GraphLink>, Place) = match file {
        Some(f) => {
            if !nodes.is_empty() || !links.is_empty() {
                return Err(FieldError::new(
                    "topology.file",
                    "give the graph in `file` or in `nodes` and `links`, not both",
                ));
            }
            let path = dir.join(f);
            let text = crate::input::read_text(&path, crate::input::MAX_TOPOLOGY).map_err(|e| {
                FieldError::new("topology.file", format!("cannot read {}: {e}", path.display()))
            })?;
            let (n, l, lines) = parse_edge_list(&text).map_err(|(line, m)| {
                FieldError::new("topology.file", format!("{}:{line}: {m}", path.display()))
            })?;
            let shown = path.display().to_string();
            let at: Place = Box::new(move |kind, i| {
                let line = if kind == "nodes" { lines.0[i] } else { lines.1[i] };
                format!("topology.file ({shown}:{line})")
            });
            (n, l, at)
        }
        None => (
            nodes.to_vec(),
            links.to_vec(),
            Box::new(|kind: &str, i: usize| format!("topology.{kind}[{i}]")),
        ),
    };
    add(t, &nodes, &links, &*at)?;
    servers(t, &nodes, nvlink);
    Ok(())
}

/// Hosts that name one server share its index; NVLink between them when any server has two.
fn servers(t: &mut Topology, nodes: &[GraphNode], nvlink: Option<BitRate>) {
    let mut index: HashMap<&str, u32> = HashMap::new();
    let mut shared = false;
    let hosts = nodes.iter().filter(|n| n.kind == GraphKind::Host);
    for (h, n) in hosts.enumerate() {
        if let Some(s) = &n.server {
            let next = h as u32;
            let id = *index.entry(s.as_str()).or_insert(next);
            shared |= id != next;
            t.server[h] = id;
        }
    }
    if shared || nvlink.is_some() {
        t.nvlink = Some(nvlink.unwrap_or(super::rail::H100_NVLINK));
    }
}

fn add(
    t: &mut Topology,
    nodes: &[GraphNode],
    links: &[GraphLink],
    at: &dyn Fn(&str, usize) -> String,
) -> Result<(), FieldError> {
    if nodes.is_empty() {
        return Err(FieldError::new("topology.nodes", "a graph needs its nodes"));
    }
    super::size_check(nodes.len() as u128)?;
    let mut id = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        if n.name.is_empty() || n.name.contains(char::is_whitespace) {
            return Err(FieldError::new(
                at("nodes", i),
                format!("a node needs a name without spaces, got {:?}", n.name),
            ));
        }
        if n.kind == GraphKind::Host && n.asic.is_some() {
            return Err(FieldError::new(
                at("nodes", i),
                format!("host \"{}\" has an `asic`: only switches have one", n.name),
            ));
        }
        let kind = match n.kind {
            GraphKind::Host => NodeKind::Host,
            GraphKind::Switch => NodeKind::Switch,
        };
        if id.insert(n.name.clone(), t.add(n.name.clone(), kind)).is_some() {
            return Err(FieldError::new(
                at("nodes", i),
                format!("two nodes are named \"{}\"", n.name),
            ));
        }
        t.nodes.last_mut().expect("just added").asic = n.asic;
    }
    let switched = nodes.iter().any(|n| n.kind == GraphKind::Switch);
    let total: u128 = links.iter().map(|l| l.count as u128).sum();
    super::links_check("topology.links", total)?;
    let mut cables = vec![0u32; nodes.len()];
    let mut direct = Vec::new();
    for (i, l) in links.iter().enumerate() {
        let key = at("links", i);
        let node = |name: &str| {
            id.get(name).copied().ok_or_else(|| {
                FieldError::new(
                    key.clone(),
                    format!(
                        "no node named \"{name}\" (the graph's nodes are {})",
                        names(nodes)
                    ),
                )
            })
        };
        let (a, b) = (node(&l.a)?, node(&l.b)?);
        if a == b {
            return Err(FieldError::new(
                key,
                format!("a cable from \"{}\" to itself", l.a),
            ));
        }
        if l.count == 0 || l.count > MAX_COUNT {
            return Err(FieldError::new(
                format!("{key}.count"),
                format!("must be 1 to {MAX_COUNT}, got {}", l.count),
            ));
        }
        let hosts = |n: crate::ids::NodeId| t.nodes[n.idx()].kind == NodeKind::Host;
        if switched && hosts(a) && hosts(b) {
            direct.push(i);
        }
        let cfg = LinkConfig {
            rate: l.rate,
            delay: l.delay,
            cable: l.cable,
            loss: l.loss,
            ber: l.ber,
            fec: l.fec,
            pre_fec_ber: l.pre_fec_ber,
            fec_latency: l.fec_latency,
            llr: l.llr,
        };
        let delay = t.cable_delay(&key, &cfg)?;
        for _ in 0..l.count {
            t.connect(a, b, &cfg, delay);
        }
        cables[a.idx()] += l.count;
        cables[b.idx()] += l.count;
    }
    // Host to host in a switched fabric: a point-to-point pair, each host's only cable.
    for &i in &direct {
        let l = &links[i];
        if cables[id[&l.a].idx()] != 1 || cables[id[&l.b].idx()] != 1 || l.count != 1 {
            return Err(FieldError::new(
                at("links", i),
                format!(
                    "a cable between hosts \"{}\" and \"{}\" in a fabric with switches: hosts do not forward frames there, so a host cabled to a host has no other cable (a DAC between two servers' ports); cable the others to a switch",
                    l.a, l.b
                ),
            ));
        }
    }
    for (i, n) in nodes.iter().enumerate() {
        let c = cables[i];
        if c == 0 {
            return Err(FieldError::new(
                at("nodes", i),
                format!("{} \"{}\" has no cable", kind_word(n.kind), n.name),
            ));
        }
        if switched && n.kind == GraphKind::Host && c > 1 {
            return Err(FieldError::new(
                at("nodes", i),
                format!(
                    "host \"{}\" has {c} cables: a host has one NIC port, cabled to one switch",
                    n.name
                ),
            ));
        }
    }
    if t.hosts.len() < 2 {
        return Err(FieldError::new(
            "topology.nodes",
            "a fabric needs at least two hosts",
        ));
    }
    connected(t, nodes)?;
    t.hosts_forward = !switched;
    Ok(())
}

fn kind_word(k: GraphKind) -> &'static str {
    match k {
        GraphKind::Host => "host",
        GraphKind::Switch => "switch",
    }
}

fn names(nodes: &[GraphNode]) -> String {
    let mut s: Vec<String> = nodes.iter().take(6).map(|n| format!("\"{}\"", n.name)).collect();
    if nodes.len() > 6 {
        s.push("...".into());
    }
    s.join(", ")
}

/// Every node reaches every other (breadth-first from the first).
fn connected(t: &Topology, nodes: &[GraphNode]) -> Result<(), FieldError> {
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); t.nodes.len()];
    for l in &t.links {
        adj[l.a.idx()].push(l.b.idx());
        adj[l.b.idx()].push(l.a.idx());
    }
    // A server joins its ports.
    let mut by_server: HashMap<&str, usize> = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        if let Some(s) = &n.server {
            if let Some(&first) = by_server.get(s.as_str()) {
                adj[first].push(i);
                adj[i].push(first);
            } else {
                by_server.insert(s.as_str(), i);
            }
        }
    }
    let mut seen = vec![false; t.nodes.len()];
    let mut stack = vec![0usize];
    seen[0] = true;
    while let Some(n) = stack.pop() {
        for &m in &adj[n] {
            if !seen[m] {
                seen[m] = true;
                stack.push(m);
            }
        }
    }
    let cut: Vec<&GraphNode> = nodes
        .iter()
        .zip(&seen)
        .filter(|(_, s)| !**s)
        .map(|(n, _)| n)
        .collect();
    if cut.is_empty() {
        return Ok(());
    }
    let shown: Vec<String> = cut.iter().take(6).map(|n| format!("\"{}\"", n.name)).collect();
    Err(FieldError::new(
        "topology.links",
        format!(
            "the graph is not connected: {}{} cannot reach \"{}\"",
            shown.join(", "),
            if cut.len() > 6 { ", ..." } else { "" },
            nodes[0].name
        ),
    ))
}

/// Node lines and link lines of an edge-list file, with the line of each.
type Parsed = (Vec<GraphNode>, Vec<GraphLink>, (Vec<usize>, Vec<usize>));

fn parse_edge_list(text: &str) -> Result<Parsed, (usize, String)> {
    let (mut nodes, mut links, mut node_lines, mut link_lines) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let words: Vec<&str> = raw.split('#').next().unwrap_or("").split_whitespace().collect();
        match words.as_slice() {
            [] => {}
            ["host", names @ ..] if !names.is_empty() => {
                for n in names {
                    nodes.push(GraphNode {
                        name: n.to_string(),
                        kind: GraphKind::Host,
                        asic: None,
                        server: None,
                    });
                    node_lines.push(line);
                }
            }
            ["switch", name, rest @ ..] if rest.len() <= 1 => {
                let asic = rest
                    .first()
                    .map(|a| {
                        Asic::deserialize(toml::Value::String(a.to_string()))
                            .map_err(|e| (line, format!("{a}: {e}")))
                    })
                    .transpose()?;
                nodes.push(GraphNode {
                    name: name.to_string(),
                    kind: GraphKind::Switch,
                    asic,
                    server: None,
                });
                node_lines.push(line);
            }
            [a, b, rate, len, rest @ ..] if rest.len() <= 1 && !matches!(*a, "host" | "switch") => {
                let rate = BitRate::parse(rate).map_err(|e| (line, format!("rate {rate}: {e}")))?;
                // A cable length (3m) or a delay (500ns).
                let (delay, cable) = match Length::parse(len) {
                    Ok(l) => (None, Some(l)),
                    Err(_) => (
                        Some(Duration::parse(len).map_err(|_| {
                            (
                                line,
                                format!("{len}: expected a cable length (3m) or a delay (500ns)"),
                            )
                        })?),
                        None,
                    ),
                };
                let count = match rest.first() {
                    None => 1,
                    Some(x) => x
                        .strip_prefix('x')
                        .and_then(|n| n.parse().ok())
                        .ok_or_else(|| (line, format!("{x}: expected a count of parallel cables like x2")))?,
                };
                links.push(GraphLink {
                    a: a.to_string(),
                    b: b.to_string(),
                    rate,
                    delay,
                    cable,
                    loss: 0.0,
                    ber: 0.0,
                    fec: None,
                    pre_fec_ber: 0.0,
                    fec_latency: None,
                    llr: None,
                    count,
                });
                link_lines.push(line);
            }
            _ => {
                return Err((
                    line,
                    "expected `host NAME...`, `switch NAME [ASIC]` or `A B RATE LENGTH|DELAY [xN]`".into(),
                ));
            }
        }
    }
    Ok((nodes, links, (node_lines, link_lines)))
}
