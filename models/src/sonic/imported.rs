//! What a `config_db.json` set: scenario keys with their values and the JSON paths they came
//! from, and warnings for what the model does not act on.

use toml::Value as T;

/// What a file set, as scenario keys and TOML values, and what it holds that the model does
/// not act on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Imported {
    pub set: Vec<(String, T)>,
    /// Where in the file each of `set` came from (a JSON path), in the same order, so that
    /// a value the scenario's validation refuses is reported where the user wrote it.
    pub from: Vec<String>,
    pub warnings: Vec<String>,
    /// The file's `PORT` table, in port order (`Ethernet0`, `Ethernet4`, ...).
    pub ports: Vec<SonicPort>,
}

/// One entry of a `PORT` table: what a box calls a port and how fast it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct SonicPort {
    pub name: String,
    /// `speed`, Mb/s (None: the entry gives none).
    pub speed_mbps: Option<u64>,
    /// `lanes`, as written (`"0,1,2,3"`).
    pub lanes: Option<String>,
    /// `alias` (the front-panel name, `etp1`), if any.
    pub alias: Option<String>,
    /// `fec`, as written (`rs`, `fc`, `none`, `auto`).
    pub fec: Option<String>,
    /// Its `LLR_PORT` entry, when the file's LLR mode applies one (`super::llr`).
    pub llr: Option<PortLlr>,
}

/// A port's `LLR_PORT` entry, with the `LLR_PROFILE` it binds (`super::llr`).
#[derive(Debug, Clone, PartialEq)]
pub struct PortLlr {
    /// `llr_local`: its receiver runs LLR.
    pub local: bool,
    /// `llr_remote`: its transmitter runs LLR.
    pub remote: bool,
    /// The profile's name and settings; None when none is bound or llrorch would refuse it
    /// (the port's LLR then stays down).
    pub profile: Option<(String, crate::llr::LlrSettings)>,
}

impl PortLlr {
    /// Whether its receiver and its transmitter run LLR: as enabled, and only under a bound
    /// profile (without one the port's LLR stays down).
    pub fn on(&self) -> [bool; 2] {
        let bound = self.profile.is_some();
        [self.local && bound, self.remote && bound]
    }

    /// The settings this port's end runs when both its sides do.
    #[cfg(test)]
    pub fn settings(&self) -> Option<crate::llr::LlrSettings> {
        (self.on() == [true, true]).then_some(self.profile.as_ref()?.1)
    }
}

impl SonicPort {
    /// The FEC this port's `fec` runs on a cable of `mbps` (the port's own `speed` when it has
    /// one): `rs` is the Reed-Solomon code IEEE 802.3 gives the port's lanes, RS(544,514) at
    /// 50 Gb/s a lane and more (PAM4: clauses 91 for 100G over two or one lanes, 119, 134),
    /// RS(528,514) below (NRZ: clauses 91 for 100G over four lanes, and 108); `none` none.
    /// None when the port leaves it open: `auto` (it follows its peer, as auto-negotiation
    /// does), `fc` (BASE-R FEC, not modelled), or no `fec` at all.
    pub fn fec_mode(&self, mbps: u64) -> Option<crate::fec::Fec> {
        use crate::fec::Fec;
        match self.fec.as_deref()? {
            "none" => Some(Fec::None),
            "rs" => {
                let speed = self.speed_mbps.unwrap_or(mbps);
                let lanes = match self.lanes.as_deref() {
                    Some(l) => l.split(',').filter(|x| !x.trim().is_empty()).count().max(1) as u64,
                    // SONiC's usual breakouts: 100G on four NRZ lanes, 50G on one PAM4 lane.
                    None if speed == 100_000 => 4,
                    None => 1,
                };
                Some(if speed / lanes >= 50_000 {
                    Fec::Rs544
                } else {
                    Fec::Rs528
                })
            }
            _ => None,
        }
    }
}

impl Imported {
    pub(crate) fn put(&mut self, key: &str, v: T, from: impl Into<String>) {
        self.set.push((key.to_string(), v));
        self.from.push(from.into());
    }

    /// The JSON path a scenario key (or a key under it) was imported from.
    pub fn source_of(&self, key: &str) -> Option<&str> {
        self.set
            .iter()
            .zip(&self.from)
            .find(|((k, _), _)| key == k || key.strip_prefix(k.as_str()).is_some_and(|r| r.starts_with('.')))
            .map(|(_, f)| f.as_str())
    }

    /// The file's port each cable takes, given the cables' rates in Mb/s in port order: the
    /// first port of the same speed not yet taken (a port without a speed fits any), as a
    /// user cables a box from its first port; None where no such port is left.
    pub fn ports_for(&self, cables_mbps: &[u64]) -> Vec<Option<&SonicPort>> {
        let mut taken = vec![false; self.ports.len()];
        cables_mbps
            .iter()
            .map(|&mbps| {
                let i = (0..self.ports.len())
                    .find(|&i| !taken[i] && self.ports[i].speed_mbps.is_none_or(|s| s == mbps))?;
                taken[i] = true;
                Some(&self.ports[i])
            })
            .collect()
    }

    pub(crate) fn warn(&mut self, w: impl Into<String>) {
        self.warnings.push(w.into());
    }

    /// The settings as a TOML table (`switch.*`, `pfc.*`), to merge under a scenario's own.
    pub fn fragment(&self) -> toml::Table {
        let mut root = toml::Table::new();
        for (key, v) in &self.set {
            let mut t = &mut root;
            let mut parts: Vec<&str> = key.split('.').collect();
            let last = parts.pop().unwrap_or_default();
            for p in parts {
                t = t
                    .entry(p)
                    .or_insert_with(|| T::Table(toml::Table::new()))
                    .as_table_mut()
                    .expect("import keys nest tables only");
            }
            t.insert(last.to_string(), v.clone());
        }
        root
    }
}
