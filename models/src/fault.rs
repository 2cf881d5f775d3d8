//! Link faults: a cable going down and coming back, flapping, or running at a degraded rate.
//!
//! A cut cable loses whatever is on it and everything sent onto it until it is repaired
//! (counted as `link_down` drops). Routing converges `switch.failover` after each change
//! (ASIC fast failover of an ECMP group, or a routing protocol's convergence): until then the
//! switches keep hashing onto the dead port. Random frame errors are the cable's `loss`.
//!
//! A PFC storm (`kind = "pfc-storm"`) is the first node of `link` sending XOFF for `priority`
//! onto the cable without pause, whatever its buffer holds, from `at` to `until`: a hung NIC
//! or driver, or a storm generator (SONiC's PFC watchdog tests use one, `pfc_gen.py`). After
//! `until` the port sends XON once its buffer allows.

use crate::error::FieldError;
use crate::ids::NodeId;
use crate::topology::Topology;
use serde::Deserialize;
use sim_core::{BitRate, Duration, Time};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// The cable fails at `at` (and is repaired at `until`, if given).
    Down,
    /// The cable runs at `rate` from `at` (until `until`, if given).
    Degrade,
    /// The cable fails at `at` and comes back `period` later, `count` times, every 2 periods.
    Flap,
    /// The first node of `link` pauses the second on `priority` from `at` (until `until`).
    PfcStorm,
}

/// One `[[fault]]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultConfig {
    /// The two nodes the cable joins, by name (`["leaf0", "spine1"]`, `["h3", "sw0"]`).
    pub link: [String; 2],
    pub kind: FaultKind,
    pub at: Duration,
    #[serde(default)]
    pub until: Option<Duration>,
    #[serde(default)]
    pub rate: Option<BitRate>,
    #[serde(default)]
    pub period: Option<Duration>,
    #[serde(default)]
    pub count: Option<u32>,
    /// The priority a PFC storm pauses.
    #[serde(default)]
    pub priority: Option<u8>,
}

/// What happens to a cable at a moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Down,
    Up,
    Rate(BitRate),
    /// The port of `a` toward `b` starts (true) or stops (false) a PFC storm on a priority.
    PfcStorm(u8, bool),
}

/// A resolved fault: at `at`, `action` on the cable between `a` and `b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultAction {
    pub at: Time,
    pub a: NodeId,
    pub b: NodeId,
    pub action: Action,
}

/// Flaps one `[[fault]]` may ask for (each is two events).
pub const MAX_FLAPS: u32 = 1_000_000;
/// Cable changes all faults together may expand into.
pub const MAX_ACTIONS: usize = 4_000_000;

/// Check every fault against the topology and expand it into timed actions.
pub fn resolve(faults: &[FaultConfig], t: &Topology) -> Result<Vec<FaultAction>, FieldError> {
    let mut out = Vec::new();
    for (i, f) in faults.iter().enumerate() {
        let key = |k: &str| format!("fault[{i}].{k}");
        if out.len() > MAX_ACTIONS {
            return Err(FieldError::new(
                format!("fault[{i}]"),
                format!("the faults add up to more than {MAX_ACTIONS} cable changes"),
            ));
        }
        let node = |name: &str| t.node_named(key("link"), name);
        let (a, b) = (node(&f.link[0])?, node(&f.link[1])?);
        if t.cables_between(a, b) == 0 {
            return Err(FieldError::new(
                key("link"),
                format!("no cable joins {} and {}", f.link[0], f.link[1]),
            ));
        }
        let at = Time::ZERO + f.at;
        if f.until.is_some_and(|u| u <= f.at) {
            return Err(FieldError::new(key("until"), "must be after `at`"));
        }
        let mut push = |at: Time, action| out.push(FaultAction { at, a, b, action });
        match f.kind {
            FaultKind::Down => {
                push(at, Action::Down);
                if let Some(u) = f.until {
                    push(Time::ZERO + u, Action::Up);
                }
            }
            FaultKind::Degrade => {
                let rate = f
                    .rate
                    .ok_or_else(|| FieldError::new(key("rate"), "a degraded cable needs its `rate`"))?;
                let full = t
                    .links
                    .iter()
                    .find(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a))
                    .map(|l| l.rate)
                    .unwrap();
                push(at, Action::Rate(rate));
                if let Some(u) = f.until {
                    push(Time::ZERO + u, Action::Rate(full));
                }
            }
            FaultKind::PfcStorm => {
                let prio = f.priority.ok_or_else(|| {
                    FieldError::new(key("priority"), "a PFC storm needs the `priority` it pauses")
                })?;
                if prio > 7 {
                    return Err(FieldError::new(
                        key("priority"),
                        format!("802.1p priorities are 0..=7, got {prio}"),
                    ));
                }
                push(at, Action::PfcStorm(prio, true));
                if let Some(u) = f.until {
                    push(Time::ZERO + u, Action::PfcStorm(prio, false));
                }
            }
            FaultKind::Flap => {
                let period = f
                    .period
                    .filter(|p| *p > Duration::ZERO)
                    .ok_or_else(|| FieldError::new(key("period"), "flapping needs a non-zero `period`"))?;
                let count = f.count.unwrap_or(1).max(1);
                if count > MAX_FLAPS {
                    return Err(FieldError::new(
                        key("count"),
                        format!("at most {MAX_FLAPS} flaps per fault, got {count}"),
                    ));
                }
                // The last repair, 2 x count x period after `at`, within the time limit.
                let last = period
                    .checked_mul(2 * count as u64)
                    .and_then(|span| span.checked_add(f.at))
                    .ok_or_else(|| {
                        FieldError::new(
                            key("count"),
                            format!(
                                "{count} flaps of {period} from {} end past the simulator's time limit of {}",
                                f.at,
                                Duration::LIMIT.text
                            ),
                        )
                    })?;
                debug_assert!(last.0 >= f.at.0);
                for k in 0..count as u64 {
                    let down = at + period * (2 * k);
                    push(down, Action::Down);
                    push(down + period, Action::Up);
                }
            }
        }
    }
    out.sort_by_key(|f| f.at);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn star() -> Topology {
        Topology::test_star(2)
    }

    fn fault(kind: FaultKind) -> FaultConfig {
        FaultConfig {
            link: ["h0".into(), "sw0".into()],
            kind,
            at: Duration::from_us(10),
            until: None,
            rate: None,
            period: Some(Duration::from_us(5)),
            count: Some(2),
            priority: None,
        }
    }

    #[test]
    fn flapping_expands_into_alternating_downs_and_ups() {
        let a = resolve(&[fault(FaultKind::Flap)], &star()).unwrap();
        let kinds: Vec<(u64, Action)> = a.iter().map(|f| (f.at.0 / 1_000_000, f.action)).collect();
        assert_eq!(
            kinds,
            vec![
                (10, Action::Down),
                (15, Action::Up),
                (20, Action::Down),
                (25, Action::Up)
            ]
        );
    }

    #[test]
    fn bad_faults_name_their_key() {
        let mut f = fault(FaultKind::Down);
        f.link[1] = "spine9".into();
        assert_eq!(resolve(&[f], &star()).unwrap_err().path, "fault[0].link");
        assert_eq!(
            resolve(&[fault(FaultKind::Degrade)], &star()).unwrap_err().path,
            "fault[0].rate"
        );
        let mut f = fault(FaultKind::Down);
        f.link = ["h0".into(), "h1".into()];
        assert!(resolve(&[f], &star()).unwrap_err().message.contains("no cable"));
    }
}
