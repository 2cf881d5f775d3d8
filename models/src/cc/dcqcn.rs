//! DCQCN: the RoCEv2 rate-based congestion control of NVIDIA ConnectX NICs.
//!
//! Sources: Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015, §3
//! (RP/NP algorithm); NVIDIA DOCA "DCQCN CC Parameters" / "DCQCN CC Algorithm" (ConnectX-4 and
//! later: parameter names, units, defaults; also `mlxconfig` dumps); the HPCC ns-3 simulator
//! (alibaba-edu/High-Precision-Congestion-Control: `simulation/src/point-to-point/model/
//! rdma-hw.cc`, "Mellanox's version of DCQCN", with the `--cc dcqcn` values of `simulation/run.py`).
//!
//! Reaction point (per QP, sender), [`ReactionPoint`]:
//! - alpha: every dce_tcp_rtt, alpha <- (1-g)*alpha + g if a CNP arrived in that period, else
//!   (1-g)*alpha. The paper's alpha lives from the QP's start (alpha = 1, decaying before any
//!   CNP); ConnectX firmware creates it at the first CNP (`DcqcnParams::alpha_from_start`). Firmware alpha is 10-bit fixed point (1024 = 1.0) and dce_tcp_g is the weight
//!   of the old value: g = (1024 - dce_tcp_g)/1024 (1019 -> 5/1024; the paper's 1/256 is 1020).
//!   Evaluated lazily: the first CNP of a period applies the increment at once and that period
//!   then has no decay. A QP's first CNP instead sets alpha = initial_alpha_value (as HPCC's
//!   `cnp_received_mlx`), and that period ends with an ordinary decay.
//! - cut: Rc <- Rc * (1 - alpha_fw / 2^rpg_gd) = Rc * (1 - alpha * 2^(10 - rpg_gd)), so
//!   (1 - alpha/2) for rpg_gd = 11, with the alpha *after* this CNP's update (firmware cuts at
//!   the start of the monitor period following the CNP, after the 1 us alpha update; the
//!   paper's eq. (1) uses the old alpha). Never below rpg_min_dec_fac % of the old rate (DOCA:
//!   "the maximal ratio of rate decrease in a single event"; 100 prevents cuts) nor rpg_min_rate.
//!   Target: the paper always sets Rt <- Rc; firmware with clamp_tgt_rate = 0 only if the rate
//!   increased since the last cut (by bytes, or by timer if clamp_tgt_rate_after_time_inc), so
//!   back-to-back cuts keep the higher target (HPCC's ClampTargetRate = false does the same).
//! - at most one cut per rate_reduce_monitor_period. Deviation: firmware and HPCC defer the cut
//!   to the end of the period and coalesce the CNPs in it; here the first CNP cuts at once and
//!   later ones in the window are [`CnpOutcome::Ignored`] (they still feed alpha).
//! - increase: after a cut, a timer (rpg_time_reset) and a byte counter (rpg_byte_reset) count
//!   events t and b, one step each. With F = rpg_threshold: fast recovery (Rc <- (Rt+Rc)/2)
//!   while max(t, b) <= F, i.e. the first F events; hyper (Rt += i * HAI, i = min(t, b) - F) when
//!   both exceed F; additive (Rt += AI) otherwise, each followed by Rc <- (Rt+Rc)/2 (rounded up
//!   so Rc reaches Rt). Rt, Rc <= line rate (or rpg_max_rate). rpg_byte_reset = 0 means no byte
//!   counter and HPCC's single-counter `RateIncEventMlx`: F fast-recovery steps, one AI step,
//!   then a flat +HAI per step. The timer stops at Rc = Rt = line rate (`timer_due()` = None).
//!
//! Notification point (per QP, receiver), [`NotificationPoint`]: a CE-marked packet triggers a
//! CNP unless one was sent for that QP less than min_time_between_cnps ago.
//!
//! Presets, in firmware units:
//!
//! | parameter                   | connectx      | dcqcn-paper  | hpcc-ns3             |
//! |-----------------------------|---------------|--------------|----------------------|
//! | rpg_time_reset              | 300us         | 55us         | 300us                |
//! | rpg_byte_reset              | 32767B        | 10MB (1e7 B) | 0 (no byte counter)  |
//! | rpg_threshold (F)           | 1             | 5            | 1                    |
//! | rpg_ai_rate                 | 5Mbps         | 40Mbps       | 5Mbps * line / 25G   |
//! | rpg_hai_rate                | 50Mbps        | 400Mbps (1)  | 50Mbps * line / 25G  |
//! | rpg_gd (11: cut alpha/2)    | 11            | 11           | 11                   |
//! | rpg_min_dec_fac             | 50 %          | 0 (none)     | 0 (none)             |
//! | rpg_min_rate                | 1Mbps         | 1Mbps (2)    | 1Gbps                |
//! | clamp_tgt_rate / _after_ti  | 0 / 1         | 1 / 1        | 0 / 1                |
//! | dce_tcp_g (g)               | 1019 (5/1024) | 1020 (1/256) | 1020 (1/256)         |
//! | dce_tcp_rtt (alpha period)  | 1us           | 55us         | 1us                  |
//! | rate_reduce_monitor_period  | 4us           | 0 (3)        | 4us                  |
//! | initial_alpha_value         | 1023          | 1024 (= 1.0) | 1024 (= 1.0)         |
//! | min_time_between_cnps       | 4us           | 50us (N)     | 0 (4)                |
//! | cnp_dscp / cnp_802p_prio    | 48 / 6        | 48 / 6 (2)   | 48 / 6 (2)           |
//!
//! rpg_max_rate and rate_to_set_on_first_cnp are off everywhere. (1) The paper gives R_AI =
//! 40 Mb/s; we found no R_HAI in it and use 10 x R_AI, the ratio of both other presets.
//! (2) Not given by that source; ConnectX value. (3) The paper's RP cuts on every CNP; its NP
//! already spaces them N = 50 us apart (HPCC's `dcqcn_paper` uses 50us here). (4) HPCC flags
//! a CNP on the ACK of every marked packet and relies on the 4 us decrease check.

use super::api::{Ack, CongestionControl};
use serde::Deserialize;
use sim_core::{BitRate, Bytes, Duration, Time};
use std::sync::Arc;

/// Named parameter sets (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DcqcnPreset {
    Connectx,
    DcqcnPaper,
    HpccNs3,
}

/// Declares every firmware parameter once: as an optional override in [`DcqcnConfig`] and as
/// a value in firmware units in `Fw` (what a preset provides).
macro_rules! firmware_params {
    ($($(#[$doc:meta])* $name:ident: $ty:ty,)*) => {
        /// `[nic.dcqcn]` as written: a preset plus optional per-field overrides, named and
        /// scaled like the mlx5 / DOCA parameters.
        #[derive(Debug, Clone, Deserialize, Default)]
        #[serde(default, deny_unknown_fields)]
        pub struct DcqcnConfig {
            pub preset: Option<DcqcnPreset>,
            $($(#[$doc])* pub $name: Option<$ty>,)*
        }
        struct Fw {
            $($name: $ty,)*
        }
        impl Fw {
            fn overridden_by(mut self, c: &DcqcnConfig) -> Self {
                $(if let Some(v) = c.$name { self.$name = v; })*
                self
            }
        }
    };
}

firmware_params! {
    rpg_time_reset: Duration,
    /// `0B` disables the byte counter.
    rpg_byte_reset: Bytes,
    rpg_threshold: u32,
    /// Absent (firmware 0): the line rate.
    rpg_max_rate: BitRate,
    rpg_ai_rate: BitRate,
    rpg_hai_rate: BitRate,
    /// log2 of the divisor of alpha in 1/1024 units: 11 = cut by alpha/2.
    rpg_gd: u32,
    /// Percent of the old rate a single cut may not go below (0..=100).
    rpg_min_dec_fac: u32,
    rpg_min_rate: BitRate,
    /// Absent (firmware 0): off.
    rate_to_set_on_first_cnp: BitRate,
    clamp_tgt_rate: bool,
    clamp_tgt_rate_after_time_inc: bool,
    /// Weight of the old alpha in 1/1024 units: g = (1024 - dce_tcp_g) / 1024.
    dce_tcp_g: u32,
    dce_tcp_rtt: Duration,
    rate_reduce_monitor_period: Duration,
    /// In 1/1024 units (1024 = exactly 1.0, beyond the firmware's 1023).
    initial_alpha_value: u32,
    min_time_between_cnps: Duration,
    cnp_dscp: u8,
    cnp_802p_prio: u8,
}

/// Fully resolved parameters (preset defaults with overrides applied), in simulator units.
#[derive(Debug, Clone)]
pub struct DcqcnParams {
    pub preset: DcqcnPreset,
    /// Alpha exists, and decays, from the QP's start (the paper's algorithm and fluid model:
    /// alpha = 1 at the start, (1-g) alpha every alpha period without a CNP; Zhu et al.,
    /// SIGCOMM 2015, and the CoNEXT 2016 model, whose flows start with alpha = 1). Otherwise it
    /// is created at initial_alpha_value by the first CNP, as ConnectX firmware does (NVIDIA
    /// DOCA "DCQCN CC Parameters": "the initial value of alpha that should be used when
    /// receiving the first CNP for a flow"; HPCC's ns-3 `cnp_received_mlx` does the same).
    pub alpha_from_start: bool,
    pub g: f64,
    pub alpha_timer: Duration,
    pub initial_alpha: f64,
    pub rate_reduce_monitor: Duration,
    /// Cut = alpha * alpha_to_cut (2^(10 - rpg_gd); 0.5 for rpg_gd = 11).
    pub alpha_to_cut: f64,
    /// A cut leaves at least this fraction of the old rate (rpg_min_dec_fac / 100).
    pub min_dec_factor: f64,
    pub min_rate: BitRate,
    /// Rate ceiling below the line rate, if any.
    pub max_rate: Option<BitRate>,
    pub rate_on_first_cnp: Option<BitRate>,
    pub clamp_tgt_rate: bool,
    pub clamp_tgt_rate_after_time_inc: bool,
    pub time_reset: Duration,
    /// Bytes per byte-counter event; 0 = no byte counter.
    pub byte_reset: u64,
    pub threshold: u32,
    pub ai: BitRate,
    pub hai: BitRate,
    pub min_time_between_cnps: Duration,
    pub cnp_dscp: u8,
    pub cnp_prio: u8,
}

impl DcqcnPreset {
    #[rustfmt::skip]
    fn defaults(self, line: BitRate) -> Fw {
        let (us, mbps) = (Duration::from_us, |m: u64| BitRate(m * 1_000_000));
        // HPCC run.py: RATE_AI = 5 * bw/25, RATE_HAI = 50 * bw/25 Mb/s (bw in Gb/s).
        let per_25g = |m: u64| BitRate((m * line.0 / 25_000).max(1));
        let connectx = Fw {
            rpg_time_reset: us(300), rpg_byte_reset: Bytes(32767), rpg_threshold: 1,
            rpg_max_rate: BitRate(0), rpg_ai_rate: mbps(5), rpg_hai_rate: mbps(50), rpg_gd: 11,
            rpg_min_dec_fac: 50, rpg_min_rate: mbps(1), rate_to_set_on_first_cnp: BitRate(0),
            clamp_tgt_rate: false, clamp_tgt_rate_after_time_inc: true,
            dce_tcp_g: 1019, dce_tcp_rtt: us(1), rate_reduce_monitor_period: us(4),
            initial_alpha_value: 1023, min_time_between_cnps: us(4),
            cnp_dscp: 48, cnp_802p_prio: 6,
        };
        match self {
            DcqcnPreset::Connectx => connectx,
            DcqcnPreset::DcqcnPaper => Fw {
                rpg_time_reset: us(55), rpg_byte_reset: Bytes(10_000_000), rpg_threshold: 5,
                rpg_ai_rate: mbps(40), rpg_hai_rate: mbps(400), rpg_min_dec_fac: 0,
                clamp_tgt_rate: true, dce_tcp_g: 1020, dce_tcp_rtt: us(55),
                rate_reduce_monitor_period: Duration::ZERO, initial_alpha_value: 1024,
                min_time_between_cnps: us(50), ..connectx
            },
            DcqcnPreset::HpccNs3 => Fw {
                rpg_byte_reset: Bytes(0), rpg_ai_rate: per_25g(5), rpg_hai_rate: per_25g(50),
                rpg_min_dec_fac: 0, rpg_min_rate: mbps(1000), dce_tcp_g: 1020,
                initial_alpha_value: 1024, min_time_between_cnps: Duration::ZERO, ..connectx
            },
        }
    }
}

type KeyError = (String, String);

fn in_range(key: &str, v: u32, lo: u32, hi: u32, why: &str) -> Result<(), KeyError> {
    let msg = || (key.into(), format!("must be {lo}..={hi}{why}, got {v}"));
    (lo..=hi).contains(&v).then_some(()).ok_or_else(msg)
}

fn at_most(key: &str, v: BitRate, max: BitRate, what: &str) -> Result<(), KeyError> {
    let msg = || (key.into(), format!("{v} exceeds the {what} {max}"));
    (v <= max).then_some(()).ok_or_else(msg)
}

fn positive(key: &str, d: Duration) -> Result<(), KeyError> {
    let msg = || (key.into(), "must be greater than zero".into());
    (d > Duration::ZERO).then_some(()).ok_or_else(msg)
}

impl DcqcnConfig {
    /// Resolve against the preset (default: Connectx). `line_rate` scales the HPCC preset's
    /// AI/HAI and bounds the rates. Err((key, message)) names the offending key.
    pub fn resolve(&self, line_rate: BitRate) -> Result<DcqcnParams, KeyError> {
        self.resolve_with(DcqcnPreset::Connectx, line_rate)
    }

    /// As [`DcqcnConfig::resolve`], with `default` when no preset is written (the NIC
    /// model's firmware defaults).
    pub fn resolve_with(&self, default: DcqcnPreset, line_rate: BitRate) -> Result<DcqcnParams, KeyError> {
        let preset = self.preset.unwrap_or(default);
        let f = preset.defaults(line_rate).overridden_by(self);
        let set = |r: BitRate| (r.0 > 0).then_some(r);
        let (max_rate, first_cnp) = (set(f.rpg_max_rate), set(f.rate_to_set_on_first_cnp));
        let ceiling = max_rate.unwrap_or(line_rate);
        positive("rpg_time_reset", f.rpg_time_reset)?;
        positive("dce_tcp_rtt", f.dce_tcp_rtt)?;
        at_most("rpg_max_rate", ceiling, line_rate, "line rate")?;
        at_most("rpg_min_rate", f.rpg_min_rate, ceiling, "maximum rate")?;
        let first = first_cnp.unwrap_or(ceiling);
        at_most("rate_to_set_on_first_cnp", first, ceiling, "maximum rate")?;
        in_range("rpg_threshold", f.rpg_threshold, 0, 31, "")?;
        in_range("rpg_gd", f.rpg_gd, 10, 15, " (11 = cut by alpha/2)")?;
        in_range("rpg_min_dec_fac", f.rpg_min_dec_fac, 0, 100, " percent")?;
        in_range("dce_tcp_g", f.dce_tcp_g, 1, 1023, " so that g is in (0, 1)")?;
        in_range("initial_alpha_value", f.initial_alpha_value, 1, 1024, "")?;
        in_range("cnp_dscp", f.cnp_dscp.into(), 0, 63, "")?;
        in_range("cnp_802p_prio", f.cnp_802p_prio.into(), 0, 7, "")?;
        Ok(DcqcnParams {
            preset,
            alpha_from_start: preset == DcqcnPreset::DcqcnPaper,
            g: f64::from(1024 - f.dce_tcp_g) / 1024.0,
            alpha_timer: f.dce_tcp_rtt,
            initial_alpha: f64::from(f.initial_alpha_value) / 1024.0,
            rate_reduce_monitor: f.rate_reduce_monitor_period,
            alpha_to_cut: 2f64.powi(10 - f.rpg_gd as i32),
            min_dec_factor: f64::from(f.rpg_min_dec_fac) / 100.0,
            min_rate: f.rpg_min_rate,
            max_rate,
            rate_on_first_cnp: first_cnp,
            clamp_tgt_rate: f.clamp_tgt_rate,
            clamp_tgt_rate_after_time_inc: f.clamp_tgt_rate_after_time_inc,
            time_reset: f.rpg_time_reset,
            byte_reset: f.rpg_byte_reset.0,
            threshold: f.rpg_threshold,
            ai: f.rpg_ai_rate,
            hai: f.rpg_hai_rate,
            min_time_between_cnps: f.min_time_between_cnps,
            cnp_dscp: f.cnp_dscp,
            cnp_prio: f.cnp_802p_prio,
        })
    }
}

pub use super::api::CnpOutcome;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Inc {
    #[default]
    None,
    Timer,
    Bytes,
}

/// Rate-increase state since the last cut.
#[derive(Debug, Clone, Default)]
struct Increase {
    timer_stage: u32,
    byte_stage: u32,
    byte_acc: u64,
    last: Inc,
}

/// Reaction point: per-QP sender rate state.
#[derive(Debug, Clone)]
pub struct ReactionPoint {
    ceiling: u64,
    rc: u64,
    rt: u64,
    g: f64,
    alpha_period: Duration,
    /// Alpha after every update of periods ending at or before `alpha_epoch`.
    alpha: f64,
    /// Start of the current alpha period.
    alpha_epoch: Time,
    /// The current alpha period already had its (CNP) update.
    alpha_updated: bool,
    /// Alpha decays and is updated (from the start, or from the first CNP; see
    /// [`DcqcnParams::alpha_from_start`]).
    alpha_live: bool,
    cnp_seen: bool,
    last_cut: Option<Time>,
    inc: Increase,
    next_timer: Option<Time>,
}

impl ReactionPoint {
    /// Starts at the line rate (or rpg_max_rate) with alpha = initial_alpha_value.
    pub fn new(p: &DcqcnParams, line_rate: BitRate, now: Time) -> Self {
        let ceiling = p.max_rate.map_or(line_rate, |m| m.min(line_rate)).0;
        ReactionPoint {
            ceiling,
            rc: ceiling,
            rt: ceiling,
            g: p.g,
            alpha_period: p.alpha_timer,
            alpha: p.initial_alpha,
            alpha_epoch: now,
            alpha_updated: false,
            alpha_live: p.alpha_from_start,
            cnp_seen: false,
            last_cut: None,
            inc: Increase::default(),
            next_timer: None,
        }
    }

    /// Current rate Rc.
    pub fn rate(&self) -> BitRate {
        BitRate(self.rc)
    }

    /// Target rate Rt.
    pub fn target(&self) -> BitRate {
        BitRate(self.rt)
    }

    /// True while the QP runs below its maximum rate (or has a target to recover to).
    pub fn is_limited(&self) -> bool {
        self.rc < self.ceiling || self.rt < self.ceiling
    }

    /// Alpha at `now`, with the decay of every alpha period ended since the last update.
    pub fn alpha(&self, now: Time) -> f64 {
        self.alpha_at(now).0
    }

    fn alpha_at(&self, now: Time) -> (f64, Time, bool) {
        let k = now.saturating_since(self.alpha_epoch).0 / self.alpha_period.0;
        if !self.alpha_live || k == 0 {
            return (self.alpha, self.alpha_epoch, self.alpha_updated);
        }
        let decays = k - u64::from(self.alpha_updated);
        let alpha = self.alpha * (1.0 - self.g).powf(decays as f64);
        (alpha, self.alpha_epoch + self.alpha_period * k, false)
    }

    /// A CNP for this QP arrived: update alpha and cut the rate, at most once per
    /// rate_reduce_monitor_period.
    pub fn on_cnp(&mut self, p: &DcqcnParams, now: Time) -> CnpOutcome {
        let first = !self.cnp_seen;
        self.cnp_seen = true;
        if !self.alpha_live {
            self.alpha_live = true;
            (self.alpha, self.alpha_epoch, self.alpha_updated) = (p.initial_alpha, now, false);
        } else {
            (self.alpha, self.alpha_epoch, self.alpha_updated) = self.alpha_at(now);
            if !self.alpha_updated {
                self.alpha = (1.0 - self.g) * self.alpha + self.g;
                self.alpha_updated = true;
            }
        }
        if self.last_cut.is_some_and(|t| now < t + p.rate_reduce_monitor) {
            return CnpOutcome::Ignored;
        }
        if let Some(r) = p.rate_on_first_cnp.filter(|_| first) {
            self.rc = r.0.clamp(p.min_rate.0, self.ceiling);
            self.rt = self.rc;
        } else {
            let clamp = p.clamp_tgt_rate
                || self.inc.last == Inc::Bytes
                || (p.clamp_tgt_rate_after_time_inc && self.inc.last == Inc::Timer);
            if clamp {
                self.rt = self.rc;
            }
            let old = self.rc as f64;
            let cut = old * (1.0 - self.alpha * p.alpha_to_cut);
            let floor = (old * p.min_dec_factor).max(p.min_rate.0 as f64);
            self.rc = (cut.max(floor).round() as u64).min(self.rc);
        }
        self.last_cut = Some(now);
        self.inc = Increase::default();
        self.next_timer = Some(now + p.time_reset);
        CnpOutcome::Handled
    }

    /// `bytes` of this QP went on the wire: every rpg_byte_reset bytes is one increase step.
    pub fn on_sent(&mut self, p: &DcqcnParams, _now: Time, bytes: u64) {
        if self.next_timer.is_none() || p.byte_reset == 0 {
            return;
        }
        self.inc.byte_acc += bytes;
        while self.inc.byte_acc >= p.byte_reset && self.next_timer.is_some() {
            self.inc.byte_acc -= p.byte_reset;
            self.step(p, Inc::Bytes);
        }
    }

    /// The rate-increase timer fired: one increase step. Calls before `timer_due()` are stale
    /// and ignored; the next period counts from `now`.
    pub fn on_timer(&mut self, p: &DcqcnParams, now: Time) {
        match self.next_timer {
            Some(due) if now >= due => self.next_timer = Some(now + p.time_reset),
            _ => return,
        }
        self.step(p, Inc::Timer);
    }

    /// When the caller should next call `on_timer`; `None` before the first cut and once the
    /// rate has fully recovered (Rc = Rt = maximum rate).
    pub fn timer_due(&self) -> Option<Time> {
        self.next_timer
    }

    fn step(&mut self, p: &DcqcnParams, kind: Inc) {
        let inc = &mut self.inc;
        match kind {
            Inc::Timer => inc.timer_stage = inc.timer_stage.saturating_add(1),
            Inc::Bytes => inc.byte_stage = inc.byte_stage.saturating_add(1),
            Inc::None => {}
        }
        inc.last = kind;
        let (t, b, f) = (inc.timer_stage, inc.byte_stage, p.threshold);
        // Target increment: 0 in fast recovery, AI in additive, i * HAI in hyper increase.
        let add = if p.byte_reset == 0 {
            match t {
                t if t <= f => 0,
                t if t == f + 1 => p.ai.0,
                _ => p.hai.0,
            }
        } else if t.max(b) <= f {
            0
        } else if t.min(b) > f {
            p.hai.0.saturating_mul(u64::from(t.min(b) - f))
        } else {
            p.ai.0
        };
        self.rt = self.rt.saturating_add(add).min(self.ceiling);
        self.rc = (self.rc + self.rt).div_ceil(2);
        if !self.is_limited() {
            self.next_timer = None;
            self.inc.byte_acc = 0;
        }
    }
}

/// DCQCN's reaction point as a flow's congestion control: the QP's rate state and its
/// host's parameters.
#[derive(Debug, Clone)]
pub struct Dcqcn {
    rp: ReactionPoint,
    p: Arc<DcqcnParams>,
}

impl Dcqcn {
    /// A QP starting at `now` on a `line_rate` port.
    pub fn new(p: Arc<DcqcnParams>, line_rate: BitRate, now: Time) -> Self {
        Dcqcn {
            rp: ReactionPoint::new(&p, line_rate, now),
            p,
        }
    }

    pub fn reaction_point(&self) -> &ReactionPoint {
        &self.rp
    }
}

impl CongestionControl for Dcqcn {
    /// DCQCN ignores ACKs: it hears of congestion through CNPs only.
    fn on_ack(&mut self, _ack: &Ack) {}

    fn on_cnp(&mut self, now: Time) -> Option<CnpOutcome> {
        Some(self.rp.on_cnp(&self.p, now))
    }

    fn on_sent(&mut self, now: Time, wire: u64) {
        self.rp.on_sent(&self.p, now, wire);
    }

    /// Calls before `timer_due()` are stale and ignored (see [`ReactionPoint::on_timer`]).
    fn on_timer(&mut self, now: Time) {
        self.rp.on_timer(&self.p, now);
    }

    fn timer_due(&self) -> Option<Time> {
        self.rp.timer_due()
    }

    fn window(&self) -> Option<u64> {
        None
    }

    fn rate(&self) -> Option<BitRate> {
        Some(self.rp.rate())
    }

    fn echoes_ecn(&self) -> bool {
        false
    }

    fn control_value(&self) -> f64 {
        self.rp.rate().0 as f64
    }
}

/// Notification point: per-QP receiver CNP pacing.
#[derive(Debug, Clone, Default)]
pub struct NotificationPoint {
    last_cnp: Option<Time>,
}

impl NotificationPoint {
    /// A CE-marked packet of this QP arrived at `now`: true when a CNP must be sent (at most
    /// one per min_time_between_cnps per QP).
    pub fn on_ce(&mut self, p: &DcqcnParams, now: Time) -> bool {
        if self.last_cnp.is_some_and(|t| now < t + p.min_time_between_cnps) {
            return false;
        }
        self.last_cnp = Some(now);
        true
    }
}

#[cfg(test)]
#[path = "dcqcn_tests.rs"]
mod tests;
