//! Which port of a switch's SONiC file each cable takes: the first free port of its speed, in
//! port order (`crate::sonic::Imported::ports_for`), as a user cables a box from its first
//! port. What a file sets per port (`fec`, `LLR_PORT`) lands on that port's end of the cable.

use super::Variant;
use super::check::Fabric;
use super::sonic::SonicInfo;
use crate::sonic::SonicPort;
use crate::topology::Topology;

/// One cable end a file's port sets.
pub struct FilePort<'v> {
    /// The cable (index into `topo.links`) and its end (0: `a`, 1: `b`).
    pub link: usize,
    pub end: usize,
    /// The cable's rate in Mb/s.
    pub mbps: u64,
    pub switch: &'v str,
    pub port: &'v SonicPort,
    pub file: &'v str,
}

/// Every cable end whose port in a switch's file `wanted` picks, switch by switch and each
/// switch's in cable order; nothing (and no walk of the fabric) when no file has such a port.
pub fn ends<'v>(
    topo: &'v Topology,
    v: &'v Variant,
    wanted: impl Fn(&SonicPort) -> bool,
) -> Vec<FilePort<'v>> {
    let any = |info: &SonicInfo| info.imported.ports.iter().any(&wanted);
    if !v
        .sonic
        .iter()
        .chain(v.tiers.iter().filter_map(|t| t.sonic.as_ref()))
        .any(any)
    {
        return Vec::new();
    }
    let fabric = Fabric::of(topo);
    let mut out = Vec::new();
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
            let Some(port) = port.filter(|p| wanted(p)) else {
                continue;
            };
            let l = &topo.links[i as usize];
            out.push(FilePort {
                link: i as usize,
                end: usize::from(l.a.idx() != node),
                mbps,
                switch: &topo.nodes[node].name,
                port,
                file: &info.file,
            });
        }
    }
    out
}
