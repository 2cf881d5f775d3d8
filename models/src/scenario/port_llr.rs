//! `LLR_PORT` on the cables: a switch whose SONiC file gives a port an LLR entry runs what it
//! says on its end of that port's cable (`crate::sonic` reads the tables; the cable takes the
//! file's port as `super::file_ports` says), under the profile the entry binds: each
//! direction runs its sender's profile, with its receiver's ACK spacing (`Network::build`).
//!
//! A direction runs LLR when its sender's transmitter does (`llr_remote`) and the far end's
//! receiver does (`llr_local`) (\[HLD\] §2.4.1.2, `crate::sonic`). The model runs LLR on a
//! cable both ways or not at all: a cable on which only one direction would runs without it,
//! with a finding. An end no file sets keeps the scenario's `llr` on the cable when it gives
//! one; else it follows the file's end, configured alike (in static mode, \[HLD\] §2.6.1.2
//! leaves enabling both ends of a link to the administrator).

use super::Variant;
use crate::llr::{LlrCable, LlrConfig, LlrSettings};
use crate::topology::{LinkSpec, Topology};

/// One end a file sets: its `LLR_PORT` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct FileEnd {
    /// `llr_local` and `llr_remote`, each false when no profile is bound (the port's LLR
    /// stays down).
    pub local: bool,
    pub remote: bool,
    /// The bound profile's name and settings.
    pub profile: Option<(String, LlrSettings)>,
    /// The switch, its port as the file names it, and the file.
    pub switch: String,
    pub port: String,
    pub file: String,
}

/// What a cable whose LLR a file sets runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// LLR both ways, each end with its profile (`a`, `b`).
    On(Box<[LlrConfig; 2]>),
    /// No end runs LLR.
    Off,
    /// LLR on at one end (or partly) and not the other: neither direction runs it.
    Mismatch,
    /// Only one direction would run it (its sender's `llr_remote` and its receiver's
    /// `llr_local`).
    OneWay,
}

/// A cable whose LLR a file sets.
#[derive(Debug, Clone, PartialEq)]
pub struct CableLlr {
    pub link: usize,
    /// The files' ends, by the cable's ends (`a`, `b`).
    pub ends: [Option<FileEnd>; 2],
    pub outcome: Outcome,
}

/// One end as it runs: receiver on, transmitter on, its profile on this cable.
type End = (bool, bool, Option<LlrConfig>);

/// Every cable of `topo` with an end whose `LLR_PORT` a SONiC file of `v`'s switches sets, in
/// cable order.
pub fn cables(topo: &Topology, v: &Variant) -> Vec<CableLlr> {
    let mut ends: Vec<(usize, usize, FileEnd)> = Vec::new();
    for e in super::file_ports::ends(topo, v, |p| p.llr.is_some()) {
        let Some(llr) = &e.port.llr else { continue };
        let [local, remote] = llr.on();
        let end = FileEnd {
            local,
            remote,
            profile: llr.profile.clone(),
            switch: e.switch.to_string(),
            port: e.port.name.clone(),
            file: e.file.to_string(),
        };
        ends.push((e.link, e.end, end));
    }
    // A cable's two ends, when both switches' files set theirs, come together by cable.
    ends.sort_by_key(|e| (e.0, e.1));
    let mut out: Vec<CableLlr> = Vec::new();
    for (link, end, f) in ends {
        if out.last().is_none_or(|c| c.link != link) {
            out.push(CableLlr {
                link,
                ends: [None, None],
                outcome: Outcome::Off,
            });
        }
        if let Some(c) = out.last_mut() {
            c.ends[end] = Some(f);
        }
    }
    for c in &mut out {
        c.outcome = outcome(&topo.links[c.link], &c.ends);
    }
    out
}

/// What a cable runs, given the ends its files set.
fn outcome(l: &LinkSpec, files: &[Option<FileEnd>; 2]) -> Outcome {
    let resolve = |s: LlrSettings| {
        let cable = LlrCable {
            ends: [true, true],
            settings: s,
        };
        cable.resolve("", l.rate, l.delay).ok().flatten()
    };
    // A profile is checked as it is imported; one the model could not run leaves the end off.
    let from_file = |f: &FileEnd| -> End {
        let cfg = f.profile.as_ref().and_then(|p| resolve(p.1));
        (f.local && cfg.is_some(), f.remote && cfg.is_some(), cfg)
    };
    let ends: [End; 2] = std::array::from_fn(|k| match (&files[k], l.llr_ends) {
        (Some(f), _) => from_file(f),
        // The scenario's: its profile when both its ends run LLR, else the defaults (an
        // array `llr = [true, false]` gives no settings).
        (None, Some(stated)) => {
            let cfg = l
                .llr
                .as_ref()
                .map(|c| c[k])
                .or_else(|| resolve(LlrSettings::default()));
            (stated[k], stated[k], cfg)
        }
        (None, None) => files[1 - k].as_ref().map_or((false, false, None), from_file),
    });
    let ab = ends[0].1 && ends[1].0;
    let ba = ends[1].1 && ends[0].0;
    match (ab, ends[0].2, ba, ends[1].2) {
        (true, Some(a), true, Some(b)) => Outcome::On(Box::new([a, b])),
        (true, _, false, _) | (false, _, true, _) => Outcome::OneWay,
        _ if ends.iter().all(|e| !e.0 && !e.1) => Outcome::Off,
        _ => Outcome::Mismatch,
    }
}

/// `topo` with the LLR its switches' files set, or None when no file sets any.
pub fn apply(topo: &Topology, v: &Variant) -> Option<Topology> {
    let cables = cables(topo, v);
    if cables.is_empty() {
        return None;
    }
    let mut t = topo.clone();
    for c in cables {
        t.links[c.link].llr = match c.outcome {
            Outcome::On(cfg) => Some(cfg),
            _ => None,
        };
    }
    Some(t)
}
