//! NSCC: the Ultra Ethernet sender-side, window-based congestion control.
//!
//! Follows the UEC reference model in uet-htsim (`htsim/sim/uec.cpp`: `UecSrc::initNsccParams`,
//! `initNscc`, `updateCwndOnAck_NSCC`, `updateCwndOnNack_NSCC`, `quick_adapt`,
//! `update_delay`, `update_base_rtt`) and UE 1.0 (Hoefler et al., arXiv 2508.08906, NSCC).
//!
//! Each ACK carries an ECN echo and gives a delay sample (RTT minus the base RTT). The pair
//! (ECN?, delay >= target?) picks one of four moves:
//!
//! | | delay < target | delay >= target |
//! |---|---|---|
//! | no ECN | proportional increase: `alpha (target - delay)` per byte | fair increase: `fi` per byte |
//! | ECN | hold (the path, not the window, is at fault: change EV) | multiplicative decrease, at most once per base RTT, never below half |
//!
//! Increases accumulate and are applied every 8 MTU acknowledged or every network RTT
//! (`cwnd += inc / cwnd`, plus `eta` once per RTT). Quick adapt drops the window to what was
//! actually delivered in the last RTT when the path is badly congested (a trim, or delay over
//! 4 targets). A NACK (trimmed packet) takes its bytes off the window. The window stays
//! between one MTU and 1.5 BDP and starts at the maximum (UE 1.0 CMS, NSCC `max_wnd`;
//! uet-htsim `set_cwnd_bounds`).
//!
//! One deviation: the window admits whole packets (a packet goes when cwnd >= in flight + its
//! size), so a ceiling below BDP + one packet keeps less than a round trip's worth in flight.
//! On a path whose base RTT is under about 1.3 packet times (a 3 m DAC: 0.37 us against
//! 0.34 us for a 4 KiB frame at 100 Gb/s) 1.5 BDP is one packet, and a single flow would run
//! at T_ser / RTT of line rate (about 90 %). Neither the specification text we could check nor
//! uet-htsim sets a floor; we raise the ceiling to BDP + one MTU there, which changes nothing
//! on longer paths (1.5 BDP >= BDP + MTU once the BDP is two packets).
//!
//! Gains scale as the reference model scales them, from a 100 Gb/s, 12 us reference network:
//! `a = BDP / 150 KB`, `b = target / 12 us`, `alpha = 4 MSS a b / target`, `fi = 5 MSS a`,
//! `eta = 0.15 MSS a`.

use super::api::{Ack, CongestionControl, SackFeedback, Trim};
use serde::Deserialize;
use sim_core::{BitRate, Duration, Time};
use std::sync::Arc;

/// `nic.cc = { kind = "nscc", ... }`: optional overrides of the derived parameters.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NsccConfig {
    /// Target queueing delay. Default: 0.75 x the network RTT with trimming, 1.0 x without.
    #[serde(default)]
    pub target_delay: Option<Duration>,
    /// Quick adapt fires when less than maxwnd / 2^qa_gate was delivered in an RTT.
    #[serde(default)]
    pub qa_gate: Option<u32>,
    /// Initial window (default: the maximum, 1.5 BDP).
    #[serde(default)]
    pub initial_window: Option<sim_core::Bytes>,
    /// SLEEK's loss probes (`uet::probe`; default on). Off: only selective ACKs and the
    /// retransmission timeout find a loss, as uet-htsim's `main_uec` without `-sleek`.
    #[serde(default)]
    pub loss_probes: Option<bool>,
}

/// Parameters of one flow's NSCC.
#[derive(Debug, Clone)]
pub struct NsccParams {
    pub mtu: f64,
    pub network_rtt: Duration,
    pub target: f64,
    /// Bytes of window per byte acknowledged per picosecond under target.
    pub alpha: f64,
    pub fi: f64,
    pub eta: f64,
    pub fi_scale: f64,
    pub gamma: f64,
    pub delay_alpha: f64,
    pub qa_gate: u32,
    pub adjust_bytes: f64,
    pub line_rate: BitRate,
    pub initial_window: Option<f64>,
    /// The sender probes for loss when no ACK comes (SLEEK).
    pub loss_probes: bool,
}

impl NsccParams {
    /// Derive the parameters for a flow on a `line_rate` NIC in a network whose unloaded
    /// round trip is `network_rtt`, with payload `mtu` per packet.
    pub fn new(
        c: &NsccConfig,
        line_rate: BitRate,
        network_rtt: Duration,
        mtu: u32,
        trimming: bool,
    ) -> NsccParams {
        let rtt = network_rtt.0.max(1) as f64;
        let target = c
            .target_delay
            .map_or(if trimming { 0.75 * rtt } else { rtt }, |d| d.0 as f64);
        let bdp = line_rate.0 as f64 * rtt / 8.0 / 1e12;
        let a = bdp / 150_000.0;
        let b = target / 12e6;
        let mss = mtu as f64;
        NsccParams {
            mtu: mss,
            network_rtt,
            target,
            alpha: 4.0 * mss * a * b / target,
            fi: 5.0 * mss * a,
            eta: 0.15 * mss * a,
            fi_scale: 0.25 * a,
            gamma: 0.8,
            delay_alpha: 0.0125,
            qa_gate: c.qa_gate.unwrap_or(3),
            adjust_bytes: 8.0 * mss,
            line_rate,
            initial_window: c.initial_window.map(|b| b.0 as f64),
            loss_probes: c.loss_probes.unwrap_or(true),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Nscc {
    pub cwnd: f64,
    base_rtt: f64,
    maxwnd: f64,
    avg_delay: f64,
    inc_bytes: f64,
    received_bytes: f64,
    achieved_bytes: f64,
    fi_count: f64,
    fast_increase: bool,
    last_adjust: Time,
    last_dec: Option<Time>,
    /// When quick adapt's measuring period ends (None: not started; the first feedback starts
    /// it, uet-htsim `_qa_endtime == 0`).
    qa_end: Option<Time>,
    bytes_to_ignore: f64,
    bytes_ignored: f64,
    trigger_qa: bool,
    /// Multiplicative decreases and quick adapts, for the counters.
    pub decreases: u64,
    pub quick_adapts: u64,
}

/// The window's ceiling on a path of round trip `rtt_ps`: 1.5 BDP, at least BDP + one MTU.
fn ceiling(p: &NsccParams, rtt_ps: f64) -> f64 {
    let bdp = p.line_rate.0 as f64 * rtt_ps / 8.0 / 1e12;
    (1.5 * bdp).max(bdp + p.mtu)
}

impl Nscc {
    /// The flow's base round trip (ps): its path's unloaded one, or the least it measured.
    pub fn base_rtt(&self) -> f64 {
        self.base_rtt
    }

    /// A flow's NSCC, starting at `now` on a path whose unloaded round trip is `path_rtt`.
    ///
    /// Its base RTT starts at that path's own round trip, what its first packet on an idle
    /// path measures (uet-htsim's `-enable_accurate_base_rtt`), and is lowered by any smaller
    /// sample. Starting every flow at the network's longest round trip instead (uet-htsim's
    /// default) understates the queueing delay of flows on shorter paths until they happen to
    /// see an idle queue, so flows on one path get shares that depend on whether they ever
    /// did; the target delay and the gains stay network-wide (UE 1.0 CMS config_base_rtt).
    pub fn new(p: &NsccParams, now: Time, path_rtt: Duration) -> Nscc {
        let base_rtt = path_rtt.0.min(p.network_rtt.0).max(1) as f64;
        let maxwnd = ceiling(p, base_rtt);
        Nscc {
            cwnd: p.initial_window.unwrap_or(maxwnd).clamp(p.mtu, maxwnd.max(p.mtu)),
            base_rtt,
            maxwnd: maxwnd.max(p.mtu),
            avg_delay: 0.0,
            inc_bytes: 0.0,
            received_bytes: 0.0,
            achieved_bytes: 0.0,
            fi_count: 0.0,
            fast_increase: false,
            last_adjust: now,
            last_dec: None,
            qa_end: None,
            bytes_to_ignore: 0.0,
            bytes_ignored: 0.0,
            trigger_qa: false,
            decreases: 0,
            quick_adapts: 0,
        }
    }

    /// May a packet of `size` bytes go with `inflight` bytes outstanding?
    #[inline]
    pub fn allows(&self, inflight: u64, size: u64) -> bool {
        self.cwnd >= (inflight + size) as f64
    }

    fn clamp(&mut self, p: &NsccParams) {
        self.cwnd = self.cwnd.clamp(p.mtu, self.maxwnd);
    }

    fn update_base_rtt(&mut self, p: &NsccParams, raw: f64) {
        if raw < self.base_rtt {
            self.base_rtt = raw;
            self.maxwnd = ceiling(p, raw);
        }
    }

    fn update_delay(&mut self, p: &NsccParams, delay: f64, ecn: bool) {
        // A delay without ECN is not path queueing: pull the average down (uec.cpp update_delay).
        let sample = if !ecn && delay > p.target {
            0.25 * self.base_rtt
        } else {
            delay
        };
        self.avg_delay = p.delay_alpha * sample + (1.0 - p.delay_alpha) * self.avg_delay;
    }

    /// Quick adapt; returns true when this ACK is consumed by it.
    fn quick_adapt(
        &mut self,
        p: &NsccParams,
        now: Time,
        loss: bool,
        skip: bool,
        delay: f64,
        inflight: u64,
    ) -> bool {
        if skip && self.bytes_ignored < self.bytes_to_ignore {
            self.inc_bytes = 0.0;
            self.received_bytes = 0.0;
            return true;
        }
        let mut fired = false;
        if self.qa_end.is_none_or(|end| now > end) {
            if self.qa_end.is_some()
                && (self.trigger_qa || loss || delay > 4.0 * p.target)
                && self.achieved_bytes < self.maxwnd / (1u64 << p.qa_gate) as f64
            {
                self.cwnd = self.achieved_bytes.max(p.mtu);
                self.bytes_to_ignore = inflight as f64;
                self.bytes_ignored = 0.0;
                self.trigger_qa = false;
                self.quick_adapts += 1;
                (self.inc_bytes, self.received_bytes) = (0.0, 0.0);
                fired = true;
            }
            self.achieved_bytes = 0.0;
            self.qa_end = Some(now + Duration((self.base_rtt + p.target) as u64));
        }
        fired
    }

    /// An ACK for `newly_acked` payload bytes, with an RTT sample and the ECN echo.
    pub fn on_ack(
        &mut self,
        p: &NsccParams,
        now: Time,
        newly_acked: u64,
        rtt: Duration,
        ecn: bool,
        inflight: u64,
    ) {
        let raw = rtt.0 as f64;
        self.update_base_rtt(p, raw);
        let delay = if raw >= self.base_rtt {
            raw - self.base_rtt
        } else {
            self.avg_delay
        };
        self.update_delay(p, delay, ecn);
        self.react(p, now, newly_acked, delay, ecn, inflight);
    }

    /// The ACK of a loss probe (`uet::probe`): a probe is a header only, so its round trip
    /// does not lower the base RTT, and one faster than the base means no queueing (uet-htsim
    /// `processAck` on `is_probe_ack`: `delay = 0`, no delay update).
    pub fn on_probe_ack(&mut self, p: &NsccParams, s: &SackFeedback) {
        let raw = s.rtt.0 as f64;
        let delay = if raw >= self.base_rtt {
            self.update_delay(p, raw - self.base_rtt, s.ecn);
            raw - self.base_rtt
        } else {
            0.0
        };
        self.react(p, s.now, s.newly_acked, delay, s.ecn, s.inflight);
    }

    /// The window's response to `newly_acked` bytes acknowledged with queueing `delay`.
    fn react(&mut self, p: &NsccParams, now: Time, newly_acked: u64, delay: f64, ecn: bool, inflight: u64) {
        let acked = newly_acked as f64;
        self.achieved_bytes += acked;
        self.received_bytes += acked;
        // Feedback on what was in flight when quick adapt fired: all of it counts towards the
        // bytes to ignore (uet-htsim `processAck`: `_bytes_ignored += newly_recvd_bytes`).
        self.bytes_ignored += acked;
        if self.quick_adapt(p, now, false, ecn, delay, inflight) {
            return;
        }
        match (ecn, delay >= p.target) {
            (false, true) => self.inc_bytes += p.fi * acked,
            (false, false) => {
                if delay < 1e6 {
                    self.fi_count += acked;
                    if self.fi_count > self.cwnd || self.fast_increase {
                        self.fast_increase = true;
                        self.cwnd += acked * p.fi_scale;
                        self.clamp(p);
                        return;
                    }
                } else {
                    self.fi_count = 0.0;
                    self.fast_increase = false;
                }
                self.inc_bytes += p.alpha * acked * (p.target - delay);
            }
            (true, true) => {
                self.fi_count = 0.0;
                self.fast_increase = false;
                let due = self.last_dec.is_none_or(|t| (now - t).0 as f64 > self.base_rtt);
                if self.avg_delay > p.target && due {
                    let factor = (1.0 - p.gamma * (self.avg_delay - p.target) / self.avg_delay).max(0.5);
                    self.cwnd *= factor;
                    self.last_dec = Some(now);
                    self.decreases += 1;
                }
            }
            (true, false) => {
                self.fi_count = 0.0;
                self.fast_increase = false;
            }
        }
        self.clamp(p);
        if self.received_bytes > p.adjust_bytes || (now - self.last_adjust).0 > p.network_rtt.0 {
            self.cwnd += self.inc_bytes / self.cwnd;
            if (now - self.last_adjust).0 >= p.network_rtt.0 {
                self.cwnd += p.eta;
                self.last_adjust = now;
            }
            self.inc_bytes = 0.0;
            self.received_bytes = 0.0;
        }
        self.clamp(p);
    }

    /// A NACK for a trimmed packet of `size` bytes. `cut` is false when RCCC runs and the
    /// trim was at the last hop (the receiver's credits, not the window, handle that).
    pub fn on_nack(&mut self, p: &NsccParams, now: Time, size: u64, cut: bool, inflight: u64) {
        self.bytes_ignored += size as f64;
        let rtt = p.network_rtt.0 as f64;
        self.update_delay(p, rtt, true);
        self.trigger_qa = true;
        // A NACK is skipped like an ECN echo while quick adapt's bytes are being ignored
        // (uet-htsim `updateCwndOnNack_NSCC`: `quick_adapt(true, true, 0)`).
        if self.quick_adapt(p, now, true, true, rtt, inflight) {
            return;
        }
        if cut {
            self.cwnd = (self.cwnd - size as f64).max(p.mtu);
        }
    }

    /// A retransmission timeout took `size` bytes out of flight.
    pub fn on_timeout(&mut self, p: &NsccParams, size: u64) {
        self.cwnd = (self.cwnd - size as f64).max(p.mtu);
    }

    pub fn maxwnd(&self) -> f64 {
        self.maxwnd
    }
}

/// NSCC as a flow's congestion control: its window and its host's parameters.
#[derive(Debug, Clone)]
pub struct NsccSender {
    n: Nscc,
    p: Arc<NsccParams>,
}

impl NsccSender {
    /// A flow starting at `now` on a path of unloaded round trip `path_rtt`.
    pub fn new(p: Arc<NsccParams>, now: Time, path_rtt: Duration) -> Self {
        NsccSender {
            n: Nscc::new(&p, now, path_rtt),
            p,
        }
    }

    pub fn nscc(&self) -> &Nscc {
        &self.n
    }

    pub fn nscc_mut(&mut self) -> &mut Nscc {
        &mut self.n
    }

    /// A trimmed packet's NACK; `cut`: it may shrink the window (not a last-hop trim under
    /// RCCC, which is the receiver's credit at fault).
    pub(super) fn trimmed(&mut self, t: &Trim, cut: bool) {
        if t.requeued {
            self.n.on_nack(&self.p, t.now, t.bytes, cut, t.inflight);
        }
    }
}

impl CongestionControl for NsccSender {
    /// NSCC takes the selective view of each ACK ([`Self::on_sack`]).
    fn on_ack(&mut self, _ack: &Ack) {}

    fn on_sack(&mut self, s: &SackFeedback) {
        if s.probe {
            return self.n.on_probe_ack(&self.p, s);
        }
        self.n
            .on_ack(&self.p, s.now, s.newly_acked, s.rtt, s.ecn, s.inflight);
    }

    fn on_trim(&mut self, t: &Trim) {
        self.trimmed(t, true);
    }

    fn on_timeout(&mut self, _now: Time, lost: u64) {
        self.n.on_timeout(&self.p, lost);
    }

    fn window(&self) -> Option<u64> {
        Some(self.n.cwnd as u64)
    }

    fn allows(&self, inflight: u64, size: u64) -> bool {
        self.n.allows(inflight, size)
    }

    /// When one more full packet would fill the window or not fit it (uet-htsim
    /// `UecSrc::sendNewPacket`: `in_flight + size >= cwnd`), and on every packet of a window
    /// under two of the receiver's coalescing units (see `nic::uet::on_sent`).
    fn asks_ack(&self, inflight: u64, mtu: u64, ack_bytes: u64) -> bool {
        self.n.cwnd <= (inflight + mtu) as f64 || self.n.cwnd < (2 * ack_bytes) as f64
    }

    fn loss_window(&self) -> Option<f64> {
        Some(self.n.cwnd)
    }

    /// The flow's base round trip and NSCC's target delay (uet-htsim `_base_rtt`,
    /// `_target_Qdelay`).
    fn probe_clock(&self) -> Option<(Duration, Duration)> {
        let clock = (Duration(self.n.base_rtt() as u64), Duration(self.p.target as u64));
        self.p.loss_probes.then_some(clock)
    }

    fn control_value(&self) -> f64 {
        self.n.cwnd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> NsccParams {
        // The reference network: 100 Gb/s, 12 us: a = 1, and with target 9 us, b = 0.75.
        NsccParams::new(
            &NsccConfig::default(),
            BitRate::gbps(100),
            Duration::from_us(12),
            4096,
            true,
        )
    }

    #[test]
    fn gains_scale_from_the_reference_network() {
        let p = params();
        assert_eq!(p.target, 9e6);
        assert!((p.fi - 5.0 * 4096.0).abs() < 1e-6);
        assert!((p.eta - 0.15 * 4096.0).abs() < 1e-6);
        assert!((p.alpha - 4.0 * 4096.0 * 0.75 / 9e6).abs() < 1e-12);
    }

    #[test]
    fn window_starts_at_one_and_a_half_bdp() {
        let p = params();
        let n = Nscc::new(&p, Time::ZERO, p.network_rtt);
        assert!((n.cwnd - 225_000.0).abs() < 1.0, "1.5 x 150 KB");
        assert!(n.allows(200_000, 4096) && !n.allows(222_000, 4096));
    }

    #[test]
    fn a_path_shorter_than_two_packets_still_keeps_two_in_flight() {
        // 100 Gb/s, 374 ns round trip: BDP = 4675 B, 1.5 BDP = 7012 B < 2 x 4096 B; the
        // ceiling is BDP + MTU = 8771 B, two packets.
        let p = NsccParams::new(
            &NsccConfig::default(),
            BitRate::gbps(100),
            Duration(374_000),
            4096,
            true,
        );
        let n = Nscc::new(&p, Time::ZERO, p.network_rtt);
        assert!((n.maxwnd() - (4675.0 + 4096.0)).abs() < 1.0, "{}", n.maxwnd());
        assert!(n.allows(4096, 4096));
        // A 12 us path is unchanged: 1.5 x 150 KB.
        let long = NsccParams::new(
            &NsccConfig::default(),
            BitRate::gbps(100),
            Duration::from_us(12),
            4096,
            true,
        );
        assert!((Nscc::new(&long, Time::ZERO, long.network_rtt).maxwnd() - 225_000.0).abs() < 1.0);
    }

    #[test]
    fn ecn_with_high_delay_cuts_at_most_once_per_rtt_and_never_below_half() {
        let p = params();
        let mut n = Nscc::new(&p, Time::ZERO, p.network_rtt);
        n.avg_delay = 100e6; // far above target: the factor floors at 0.5
        let before = n.cwnd;
        let rtt = Duration::from_us(12 + 50); // delay 50 us >= target
        n.on_ack(&p, Time(1_000_000), 4096, rtt, true, 100_000);
        assert!(
            (n.cwnd - before * 0.5).abs() < 1.0,
            "{} vs {}",
            n.cwnd,
            before * 0.5
        );
        let after = n.cwnd;
        n.on_ack(&p, Time(2_000_000), 4096, rtt, true, 100_000);
        assert_eq!(n.cwnd, after, "second decrease within a base RTT is skipped");
    }

    #[test]
    fn ecn_with_low_delay_holds_the_window() {
        let p = params();
        let mut n = Nscc::new(&p, Time::ZERO, p.network_rtt);
        n.cwnd = 100_000.0;
        n.on_ack(&p, Time(1_000_000), 4096, Duration::from_us(13), true, 50_000);
        assert_eq!(n.cwnd, 100_000.0);
    }

    #[test]
    fn nack_takes_its_bytes_off_the_window() {
        let p = params();
        let mut n = Nscc::new(&p, Time::ZERO, p.network_rtt);
        n.cwnd = 100_000.0;
        n.achieved_bytes = 1e9; // enough delivered: quick adapt does not fire
        n.on_nack(&p, Time(100), 4096, true, 50_000);
        assert_eq!(n.cwnd, 100_000.0 - 4096.0);
        n.on_nack(&p, Time(200), 4096, false, 50_000);
        assert_eq!(n.cwnd, 100_000.0 - 4096.0, "last-hop trim under RCCC: no cut");
    }

    #[test]
    fn quick_adapt_falls_to_what_was_delivered() {
        let p = params();
        let mut n = Nscc::new(&p, Time::ZERO, p.network_rtt);
        // The first feedback only starts the measuring period (uet-htsim `_qa_endtime` 0):
        // a flow that has not yet heard anything has delivered nothing to judge.
        n.on_nack(&p, Time(30_000_000), 4096, true, 80_000);
        assert_eq!(n.quick_adapts, 0);
        // One base RTT + target (12 + 9 us) later, with less than maxwnd / 8 delivered.
        n.achieved_bytes = 10_000.0;
        n.on_nack(&p, Time(52_000_000), 4096, true, 80_000);
        assert_eq!(n.cwnd, 10_000.0);
        assert_eq!(n.quick_adapts, 1);
    }
}
