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
    let files = super::file_ports::ends(topo, v, |p| p.fec.is_some());
    if files.is_empty() {
        return Vec::new();
    }
    let mut ends: Vec<[Option<FileEnd>; 2]> = vec![[None, None]; topo.links.len()];
    for e in files {
        let Some(fec) = e.port.fec_mode(e.mbps) else {
            continue;
        };
        ends[e.link][e.end] = Some(FileEnd {
            fec,
            switch: e.switch.to_string(),
            port: e.port.name.clone(),
            file: e.file.to_string(),
        });
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
        set_fec(&mut t, c.link, c.result);
    }
    Some(t)
}

/// Cable `i` runs FEC `fec` at both ends, its decoder's least latency added to each hop,
/// or never comes up (None: its ends differ).
fn set_fec(t: &mut Topology, i: usize, fec: Option<Fec>) {
    let l = &mut t.links[i];
    match fec {
        None => l.up = false,
        Some(f) if f != l.errors.fec.fec => {
            let old = l.errors.fec.fec.latency(l.rate);
            l.delay = sim_core::Duration(l.delay.0.saturating_sub(old.0)) + f.latency(l.rate);
            l.errors.fec = crate::fec::BitErrors::new(l.errors.fec.pre_fec_ber, f);
        }
        Some(_) => {}
    }
}
