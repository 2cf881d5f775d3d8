//! `PORT.<port>.fec` on the cables: a switch whose SONiC file gives its ports an FEC mode runs
//! that mode on its end of each cable (the cable taking the file's port as
//! `Imported::ports_for` says: the first free port of its speed, in port order).
//!
//! An end the scenario leaves open (no `fec` on the cable) follows the other, as an end
//! with FEC auto-negotiation does (IEEE 802.3 clause 73: both ends resolve to the mode they
//! share; mlx5's and SONiC's `auto`). An end the scenario sets keeps it, and a file that gives
//! its port another mode keeps the cable down, as two ends forced to different modes do
//! (neither finds the other's codeword markers: 802.3 clause 91.5.3.1, alignment lock).

use super::Variant;
use super::check::Fabric;
use crate::fec::Fec;
use crate::topology::Topology;

/// One end's mode, as a file gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEnd {
    pub fec: Fec,
    /// The switch, its port as the file names it, and the file.
    pub switch: String,
    pub port: String,
    pub file: String,
}

/// A cable whose FEC a file decides: the mode both ends run, or None when they differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CableFec {
    pub link: usize,
    /// The files' ends, by the cable's ends (`a`, `b`).
    pub ends: [Option<FileEnd>; 2],
    pub result: Option<Fec>,
}

/// Every cable of `topo` whose FEC the SONiC files of `v`'s switches set, in cable order.
pub fn cables(topo: &Topology, v: &Variant) -> Vec<CableFec> {
    let any = |info: &super::sonic::SonicInfo| info.imported.ports.iter().any(|p| p.fec.is_some());
    if !v
        .sonic
        .iter()
        .chain(v.tiers.iter().filter_map(|t| t.sonic.as_ref()))
        .any(any)
    {
        return Vec::new();
    }
    let fabric = Fabric::of(topo);
    let mut ends: Vec<[Option<FileEnd>; 2]> = vec![[None, None]; topo.links.len()];
    for (s, cables) in fabric.cables.iter().enumerate() {
        let Some(info) = v.sonic_of(s).filter(|i| any(i)) else {
            continue;
        };
        let node = fabric.switch_node[s];
        let rates: Vec<u64> = cables
            .iter()
            .map(|&i| topo.links[i as usize].rate.0 / 1_000_000)
            .collect();
        let taken = info.imported.ports_for(&rates);
        for ((&i, port), mbps) in cables.iter().zip(taken).zip(rates) {
            let (Some(port), l) = (port, &topo.links[i as usize]) else {
                continue;
            };
            let Some(fec) = port.fec_mode(mbps) else {
                continue;
            };
            let end = usize::from(l.a.idx() != node);
            ends[i as usize][end] = Some(FileEnd {
                fec,
                switch: topo.nodes[node].name.clone(),
                port: port.name.clone(),
                file: info.file.clone(),
            });
        }
    }
    ends.into_iter()
        .enumerate()
        .filter(|(i, e)| topo.links[*i].up && e.iter().any(Option::is_some))
        .map(|(link, ends)| {
            let l = &topo.links[link];
            let set: Vec<Fec> = ends.iter().flatten().map(|e| e.fec).collect();
            let agree = set.iter().all(|&f| f == set[0]);
            let result = match l.fec_stated {
                // The scenario's mode at both ends, unless a file forces another.
                true => set
                    .iter()
                    .all(|&f| f == l.errors.fec.fec)
                    .then_some(l.errors.fec.fec),
                false => agree.then_some(set[0]),
            };
            CableFec { link, ends, result }
        })
        .collect()
}

/// `topo` as variant `v` runs it: each cable with the FEC its switches' files set, or None
/// when no file sets any (the scenario's topology as it is).
pub fn apply(topo: &Topology, v: &Variant) -> Option<Topology> {
    let cables = cables(topo, v);
    if cables.is_empty() {
        return None;
    }
    let mut t = topo.clone();
    for c in &cables {
        t.set_fec(c.link, c.result);
    }
    Some(t)
}
