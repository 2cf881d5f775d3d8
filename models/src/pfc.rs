//! Priority-based Flow Control (IEEE 802.1Qbb).
//!
//! A receiver whose lossless ingress buffer for a priority crosses its XOFF threshold sends a
//! PFC frame (a 64 B MAC control frame, EtherType 0x8808, opcode 0x0101) asking its peer to stop
//! that priority for `quanta` x 512 bit times; it refreshes the pause before it expires and sends
//! a zero-quanta frame (XON) when the buffer drains. The peer stops that priority only: after its
//! current frame, and after its response time (Cisco, "Priority Flow Control: Build Reliable
//! Layer 2 Infrastructure", Nexus 5000 white paper: 60 quanta; IEEE 802.3 Annex 31B bounds it
//! at 394 quanta at 100 Gb/s).
//!
//! Headroom, the buffer that absorbs what is already on its way when XOFF is sent, follows the
//! same white paper: the frame our port is sending when it decides (the PAUSE cannot preempt
//! it), the PAUSE itself, the cable twice (the PAUSE going, data still arriving), the peer's
//! response time and the frame the peer is sending when it reacts.
//!
//! A port's state on either side of a pause, [`crate::pause::PauseState`] and [`crate::pause::XoffState`], is in
//! `crate::pause`.

use crate::error::FieldError;
use crate::packet::{MIN_FRAME, PFC_FRAME, on_wire};
use crate::prio::PrioMask;
use serde::Deserialize;
use sim_core::{BitRate, Bytes, Duration};

/// One pause quantum is 512 bit times.
pub const QUANTUM_BITS: u64 = 512;

/// `[pfc]`: applies to every port of the fabric, switches and NICs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PfcConfig {
    /// Lossless priorities (PFC enabled). Empty: PFC off, every class lossy.
    #[serde(default)]
    pub priorities: Vec<u8>,
    /// Pause time requested by an XOFF frame, in quanta.
    #[serde(default = "default_quanta")]
    pub quanta: u16,
    /// How often an XOFF is re-sent while the buffer stays above XON. Default: half the pause time.
    #[serde(default)]
    pub refresh: Option<Duration>,
    /// Time a port takes to act on a received PFC frame, in quanta of its own rate.
    #[serde(default = "default_response")]
    pub response_quanta: u16,
    /// Headroom per lossless priority group and port. Default: computed per port from its
    /// rate, cable delay, the MTU and the response time.
    #[serde(default)]
    pub headroom: Option<Bytes>,
    /// Headroom by port rate, or rate and cable (`{ "25Gbps" = "65024B", "100Gbps/40m" =
    /// "44032B" }`, as SONiC's per-speed and cable lossless profiles set it): a port takes
    /// the entry of its rate and cable, else of its rate, else `headroom`.
    #[serde(default)]
    pub headroom_by_rate: std::collections::BTreeMap<String, Bytes>,
    /// Static XOFF threshold on a priority group's shared-buffer use. Default: the dynamic
    /// ingress threshold (alpha x free buffer).
    #[serde(default)]
    pub xoff: Option<Bytes>,
    /// XON hysteresis: a switch PG resumes when its shared use is this far below its XOFF
    /// threshold (default: the ASIC profile's, as SONiC's templates set it), a NIC receive
    /// buffer when its fill is this far below XOFF (default: mlx5's rule, one maximum-MTU
    /// frame, see `crate::nic::rx`).
    #[serde(default)]
    pub xon_offset: Option<Bytes>,
    /// A port paused (or pausing its peer) continuously for longer than this counts a storm.
    #[serde(default = "default_watchdog")]
    pub watchdog: Duration,
    /// What a switch's PFC watchdog does to an egress queue paused for `watchdog` without a
    /// break (SONiC `PFC_WD.action`): "off" (storms are counted only), "alert", "drop",
    /// "forward" (`crate::sim::pfc_wd`).
    #[serde(default)]
    pub watchdog_action: WatchdogAction,
    /// A stormed queue is restored after this long with no PFC frame on its priority (SONiC
    /// `PFC_WD.restoration_time`; default twice `watchdog`, as `config pfcwd start` sets it).
    #[serde(default)]
    pub watchdog_restore: Option<Duration>,
    /// A cycle of egress ports, each paused by the next with frames for it waiting and no
    /// data frame leaving any of them for this long, is reported as a PFC deadlock.
    #[serde(default = "default_deadlock_timeout")]
    pub deadlock_timeout: Duration,
    /// What a detected deadlock does to the run: "stop" (results marked incomplete) or
    /// "continue" (reported, the run goes on to its limits).
    #[serde(default)]
    pub on_deadlock: OnDeadlock,
    /// How the lossless priorities are kept lossless: "pfc" (pause frames, headroom) or
    /// "cbfc" (Ultra Ethernet's credit-based flow control, `crate::cbfc`; no PFC frame) on
    /// `pfc.cbfc.priorities` (by default all), PFC on the others.
    #[serde(default)]
    pub mode: crate::cbfc::FlowControl,
    /// `[pfc.cbfc]`: the credit loop's settings, when `mode = "cbfc"`.
    #[serde(default)]
    pub cbfc: crate::cbfc::CbfcConfig,
}

/// The PFC watchdog's mitigation (SONiC's pfcwd orchagent handlers, `pfcactionhandler.cpp`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WatchdogAction {
    /// No watchdog on the queues; pauses longer than `watchdog` are counted as storms.
    #[default]
    Off,
    /// Storms detected and restored are counted; PFC is not touched.
    Alert,
    /// PFC on the priority is disabled on the port (received frames ignored, none sent) and
    /// the queue's frames, and those arriving on the port at that priority, are dropped.
    Drop,
    /// PFC on the priority is disabled on the port; frames keep flowing, now lossy.
    Forward,
}

impl WatchdogAction {
    pub fn name(self) -> &'static str {
        match self {
            WatchdogAction::Off => "off",
            WatchdogAction::Alert => "alert",
            WatchdogAction::Drop => "drop",
            WatchdogAction::Forward => "forward",
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnDeadlock {
    #[default]
    Stop,
    Continue,
}

fn default_quanta() -> u16 {
    0xffff
}
fn default_response() -> u16 {
    60
}
/// SONiC's PFC watchdog default detection time.
fn default_watchdog() -> Duration {
    Duration(200 * 1_000_000_000)
}
/// Much shorter than the storm watchdog: simulated runs last milliseconds, and a deadlocked
/// cycle stays silent forever, so 200 us without a data frame is unambiguous.
fn default_deadlock_timeout() -> Duration {
    Duration(200 * 1_000_000)
}

/// A `headroom_by_rate` key: a rate, optionally `/` a cable length.
fn port_kind(k: &str) -> Result<(BitRate, Option<sim_core::Length>), sim_core::UnitError> {
    let (rate, cable) = match k.split_once('/') {
        Some((r, c)) => (r, Some(sim_core::Length::parse(c.trim())?)),
        None => (k, None),
    };
    Ok((BitRate::parse(rate.trim())?, cable))
}

impl Default for PfcConfig {
    fn default() -> Self {
        PfcConfig {
            priorities: Vec::new(),
            quanta: default_quanta(),
            refresh: None,
            response_quanta: default_response(),
            headroom: None,
            headroom_by_rate: Default::default(),
            xoff: None,
            xon_offset: None,
            watchdog: default_watchdog(),
            watchdog_action: WatchdogAction::Off,
            watchdog_restore: None,
            deadlock_timeout: default_deadlock_timeout(),
            on_deadlock: OnDeadlock::Stop,
            mode: crate::cbfc::FlowControl::Pfc,
            cbfc: crate::cbfc::CbfcConfig::default(),
        }
    }
}

impl PfcConfig {
    pub fn validate(&self) -> Result<(), FieldError> {
        if let Some(p) = self.priorities.iter().find(|&&p| p > 7) {
            return Err(FieldError::new(
                "pfc.priorities",
                format!("802.1p priorities are 0..=7, got {p}"),
            ));
        }
        if !self.priorities.is_empty() && self.quanta == 0 {
            return Err(FieldError::new(
                "pfc.quanta",
                "an XOFF must request a pause of at least 1 quantum",
            ));
        }
        if self.refresh == Some(Duration::ZERO) {
            return Err(FieldError::new("pfc.refresh", "must be greater than zero"));
        }
        for k in self.headroom_by_rate.keys() {
            port_kind(k).map_err(|e| {
                FieldError::new(
                    format!("pfc.headroom_by_rate.{k}"),
                    format!("expected a rate or rate/cable like \"100Gbps/40m\": {e}"),
                )
            })?;
        }
        if self.watchdog == Duration::ZERO {
            return Err(FieldError::new("pfc.watchdog", "must be greater than zero"));
        }
        if self.watchdog_restore == Some(Duration::ZERO) {
            return Err(FieldError::new(
                "pfc.watchdog_restore",
                "must be greater than zero",
            ));
        }
        if self.deadlock_timeout < Duration::from_ns(4) {
            return Err(FieldError::new("pfc.deadlock_timeout", "must be at least 4ns"));
        }
        if self.mode == crate::cbfc::FlowControl::Cbfc {
            if self.priorities.is_empty() {
                return Err(FieldError::new(
                    "pfc.mode",
                    "\"cbfc\" runs on the lossless priorities: set pfc.priorities",
                ));
            }
            if let Some(c) = &self.cbfc.priorities {
                if c.is_empty() {
                    return Err(FieldError::new(
                        "pfc.cbfc.priorities",
                        "name at least one lossless priority (or leave it out: all of pfc.priorities)",
                    ));
                }
                if let Some(p) = c.iter().find(|p| !self.priorities.contains(p)) {
                    return Err(FieldError::new(
                        "pfc.cbfc.priorities",
                        format!(
                            "priority {p} is not lossless: CBFC runs on some of pfc.priorities ({:?})",
                            self.priorities
                        ),
                    ));
                }
            }
            if self.watchdog_action != WatchdogAction::Off && self.pause_mask().is_empty() {
                return Err(FieldError::new(
                    "pfc.watchdog_action",
                    "the PFC watchdog acts on pause frames; with pfc.mode = \"cbfc\" on every lossless priority there are none",
                ));
            }
        } else if self.cbfc.priorities.is_some() {
            return Err(FieldError::new(
                "pfc.cbfc.priorities",
                "the priorities that run CBFC need pfc.mode = \"cbfc\"",
            ));
        }
        Ok(())
    }

    /// How long a stormed queue must see no PFC frame to be restored.
    pub fn restoration(&self) -> Duration {
        self.watchdog_restore
            .unwrap_or(Duration(self.watchdog.0.saturating_mul(2)))
    }

    /// The headroom configured for a port of `rate` on a cable of `delay`, if any.
    pub fn headroom_for(&self, rate: BitRate, delay: Duration) -> Option<u64> {
        self.headroom_source(rate, delay).map(|(_, b)| b)
    }

    /// The headroom configured for a port of `rate` on a cable of `delay`, with the
    /// `headroom_by_rate` entry that sets it (None: `headroom`).
    pub fn headroom_source(&self, rate: BitRate, delay: Duration) -> Option<(Option<&str>, u64)> {
        let find = |with_cable: bool| {
            self.headroom_by_rate.iter().find_map(|(k, b)| {
                let (r, cable) = port_kind(k).ok()?;
                let cable_ok = match cable {
                    Some(len) => with_cable && crate::link::cable_delay(len) == delay,
                    None => !with_cable,
                };
                (r == rate && cable_ok).then_some((Some(k.as_str()), b.0))
            })
        };
        find(true).or(find(false)).or(self.headroom.map(|b| (None, b.0)))
    }

    /// The refresh must come before the pause it renews expires on the fastest port.
    /// A pause must outlast its renewal: the refresh, then the data frame the port may be
    /// sending (up to `max_frame`), the PFC frame itself and the peer's response time (at the
    /// fastest port, where a pause is shortest). Otherwise the peer resumes between refreshes
    /// and a lossless class drops.
    /// And a refresh must not come faster than the slowest port can send PFC frames.
    pub fn validate_rates(
        &self,
        fastest: BitRate,
        slowest: BitRate,
        max_frame: u32,
    ) -> Result<(), FieldError> {
        if self.priorities.is_empty() {
            return Ok(());
        }
        if self.is_cbfc() {
            self.cbfc.validate(max_frame)?;
        }
        if self.pause_mask().is_empty() {
            return Ok(());
        }
        let frame = slowest.tx_time(on_wire(PFC_FRAME));
        if let Some(r) = self.refresh.filter(|&r| r < frame) {
            return Err(FieldError::new(
                "pfc.refresh",
                format!(
                    "{r} is shorter than a PFC frame takes on the wire at {slowest} ({frame}): refreshes would queue without end"
                ),
            ));
        }
        let renews = |quanta: u16, refresh: Option<Duration>| {
            let pause = Self::pause_time(fastest, quanta);
            let refresh = refresh.unwrap_or(Duration(pause.0 / 2).max(Duration(1)));
            let renewal = fastest.tx_time(on_wire(max_frame))
                + fastest.tx_time(on_wire(PFC_FRAME))
                + Self::pause_time(fastest, self.response_quanta);
            (refresh + renewal < pause, pause, refresh, renewal)
        };
        let (ok, pause, refresh, renewal) = renews(self.quanta, self.refresh);
        if ok {
            return Ok(());
        }
        let key = if self.refresh.is_some() {
            "pfc.refresh"
        } else {
            "pfc.quanta"
        };
        let least = (1..=u16::MAX).find(|&q| renews(q, None).0);
        Err(FieldError::new(
            key,
            format!(
                "a pause of {} quanta ({pause} at {fastest}) expires before a refresh every {refresh} renews it (a renewal can take {renewal}: a {max_frame} B frame in service, the PFC frame and the peer's {}-quanta response){}",
                self.quanta,
                self.response_quanta,
                least
                    .map(|q| format!("; with the default refresh use at least {q} quanta"))
                    .unwrap_or_default()
            ),
        ))
    }

    /// Whether some lossless priorities run CBFC rather than PFC.
    #[inline]
    pub fn is_cbfc(&self) -> bool {
        !self.cbfc_mask().is_empty()
    }

    /// The lossless priorities.
    pub fn mask(&self) -> PrioMask {
        self.priorities.iter().copied().collect()
    }

    /// The lossless priorities that run CBFC (`pfc.mode = "cbfc"`: `pfc.cbfc.priorities`, by
    /// default all of them).
    pub fn cbfc_mask(&self) -> PrioMask {
        if self.mode != crate::cbfc::FlowControl::Cbfc {
            return PrioMask::EMPTY;
        }
        match &self.cbfc.priorities {
            Some(p) => p.iter().copied().collect::<PrioMask>() & self.mask(),
            None => self.mask(),
        }
    }

    /// The lossless priorities PFC keeps lossless: pause frames, headroom.
    pub fn pause_mask(&self) -> PrioMask {
        self.mask() & !self.cbfc_mask()
    }

    /// How long `quanta` pause a port of `rate`.
    pub fn pause_time(rate: BitRate, quanta: u16) -> Duration {
        Duration((quanta as u128 * QUANTUM_BITS as u128 * 1_000_000_000_000).div_ceil(rate.0 as u128) as u64)
    }

    pub fn response_time(&self, rate: BitRate) -> Duration {
        Self::pause_time(rate, self.response_quanta)
    }

    pub fn refresh_interval(&self, rate: BitRate) -> Duration {
        self.refresh
            .unwrap_or(Duration(Self::pause_time(rate, self.quanta).0 / 2).max(Duration(1)))
    }

    /// Buffer a lossless priority group needs as headroom on a port of `rate` whose cable has
    /// delay `delay`, when the largest frame either side may send is `max_frame` bytes (frame
    /// length, without preamble and IFG), the peer responds after `peer_response`, and the
    /// buffer allocates `cell`-byte cells.
    ///
    /// What may arrive after the XOFF decision, in wire bytes: the frame our port is sending
    /// (it delays the PAUSE), the PAUSE itself, the cable both ways, and the peer's response
    /// time; then the frame the peer is in the middle of. Cells make small frames expensive (a
    /// 64 B frame takes a whole 256 B cell for 84 wire bytes), so arrivals are costed at the
    /// worst cell occupancy of any frame size (SONiC's dynamic buffer calculation applies the
    /// same "cell occupancy" factor).
    pub fn headroom_needed(
        rate: BitRate,
        delay: Duration,
        max_frame: u32,
        peer_response: Duration,
        cell: u32,
    ) -> u64 {
        let cell = cell.max(1) as u64;
        let frame_wire = on_wire(max_frame);
        let in_flight = |d: Duration| rate.bytes_in(d) + 1;
        let arrivals = frame_wire + on_wire(PFC_FRAME) + 2 * in_flight(delay) + in_flight(peer_response);
        let buffered = |f: u64| f.div_ceil(cell) * cell;
        // Buffer per wire byte, as a fraction (num, den), worst over frame sizes: the smallest
        // frame, the largest, and the first size past a cell boundary (the ratio peaks there).
        let past_boundary = (MIN_FRAME as u64).div_ceil(cell) * cell + 1;
        let (num, den) = [MIN_FRAME as u64, past_boundary, max_frame as u64]
            .into_iter()
            .filter(|&f| f >= MIN_FRAME as u64 && f <= max_frame as u64)
            .map(|f| (buffered(f), on_wire(f as u32)))
            .max_by(|a, b| (a.0 * b.1).cmp(&(b.0 * a.1)))
            .expect("the largest frame is a candidate");
        (arrivals * num).div_ceil(den) + buffered(max_frame as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quantum_is_512_bit_times() {
        assert_eq!(PfcConfig::pause_time(BitRate::gbps(100), 1), Duration(5_120));
        // 512 bits at 200 and 400 Gb/s: 2.56 ns and 1.28 ns.
        assert_eq!(PfcConfig::pause_time(BitRate::gbps(200), 1), Duration(2_560));
        assert_eq!(PfcConfig::pause_time(BitRate::gbps(400), 1), Duration(1_280));
        assert_eq!(
            PfcConfig::pause_time(BitRate::gbps(100), 0xffff),
            Duration(5_120 * 0xffff)
        );
    }

    #[test]
    fn headroom_counts_arrivals_at_the_worst_cell_occupancy() {
        let rate = BitRate::gbps(100);
        // Arrivals: 4178 (our frame) + 84 (PAUSE) + 2 x (187 + 1) (3 m) + (3837 + 1) = 12476 B.
        let arrivals: u64 = 4178 + 84 + 2 * 188 + 3838;
        // 1-byte cells: the largest frame stores the most per wire byte (4158 of 4178).
        let h = PfcConfig::headroom_needed(rate, Duration::from_ns(15), 4158, Duration::from_ns(307), 1);
        assert_eq!(h, (arrivals * 4158).div_ceil(4178) + 4158);
        // 256 B cells: a 64 B frame takes a whole cell for 84 wire bytes.
        let h256 = PfcConfig::headroom_needed(rate, Duration::from_ns(15), 4158, Duration::from_ns(307), 256);
        assert_eq!(h256, (arrivals * 256).div_ceil(84) + 17 * 256);
        let long = PfcConfig::headroom_needed(rate, Duration::from_ns(500), 4158, Duration::from_ns(307), 1);
        assert!(long > h, "a longer cable needs more");
    }
}
