//! A flow's congestion control, whatever the scheme: [`Sender`], one value per flow that
//! forwards every [`CongestionControl`] call to the scheme `nic.cc.kind` chose (statically for
//! the built-in schemes, through the trait object for a plug-in), and [`Senders`], which
//! builds it when the flow starts from what the run knows of its host and its path.

use super::CcConfig;
use super::api::{Ack, CnpOutcome, CongestionControl, Ctx, SackFeedback, Trim};
use super::dcqcn::{Dcqcn, DcqcnParams};
use super::nscc::{NsccParams, NsccSender};
use super::rccc::RcccSender;
use sim_core::{BitRate, Duration, Time};
use std::sync::Arc;

/// No congestion control: the line rate, no window (`nic.cc = { kind = "none" }`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Line;

impl CongestionControl for Line {
    fn on_ack(&mut self, _ack: &Ack) {}

    fn window(&self) -> Option<u64> {
        None
    }

    fn echoes_ecn(&self) -> bool {
        false
    }
}

/// NSCC's window and RCCC's credit together (`kind = "nscc-rccc"`): a packet needs both.
#[derive(Debug, Clone)]
pub struct NsccRccc {
    pub nscc: NsccSender,
    pub rccc: RcccSender,
}

impl CongestionControl for NsccRccc {
    fn on_ack(&mut self, _ack: &Ack) {}

    fn on_sack(&mut self, s: &SackFeedback) {
        self.nscc.on_sack(s);
        self.rccc.on_sack(s);
    }

    /// A trim at the last hop is the receiver's credit at fault, not the window.
    fn on_trim(&mut self, t: &Trim) {
        self.nscc.trimmed(t, !t.last_hop);
        CongestionControl::on_trim(&mut self.rccc, t);
    }

    fn on_timeout(&mut self, now: Time, lost: u64) {
        self.nscc.on_timeout(now, lost);
    }

    fn on_sent(&mut self, now: Time, wire: u64) {
        CongestionControl::on_sent(&mut self.rccc, now, wire);
    }

    fn on_credit(&mut self, total: u64) -> u64 {
        CongestionControl::on_credit(&mut self.rccc, total)
    }

    fn credit(&self) -> Option<i64> {
        CongestionControl::credit(&self.rccc)
    }

    fn pull_target(&self, backlog: u64, packet: u64) -> Option<u32> {
        self.rccc.pull_target(backlog, packet)
    }

    fn window(&self) -> Option<u64> {
        self.nscc.window()
    }

    fn allows(&self, inflight: u64, size: u64) -> bool {
        self.nscc.allows(inflight, size) && CongestionControl::allows(&self.rccc, inflight, size)
    }

    fn asks_ack(&self, inflight: u64, mtu: u64, ack_bytes: u64) -> bool {
        self.nscc.asks_ack(inflight, mtu, ack_bytes) || self.rccc.asks_ack(inflight, mtu, ack_bytes)
    }

    fn loss_window(&self) -> Option<f64> {
        self.nscc.loss_window()
    }

    fn probe_clock(&self) -> Option<(Duration, Duration)> {
        self.nscc.probe_clock()
    }

    fn control_value(&self) -> f64 {
        self.nscc.control_value()
    }
}

/// One flow's congestion control. Built-in schemes are dispatched statically; a plug-in
/// through its trait object.
#[derive(Debug, Default)]
pub enum Sender {
    /// Before the flow starts, and for `kind = "none"`.
    #[default]
    Line,
    Dcqcn(Box<Dcqcn>),
    Nscc(Box<NsccSender>),
    Rccc(Box<RcccSender>),
    NsccRccc(Box<NsccRccc>),
    /// HPCC, Swift, DCTCP, or yours.
    Plugin(Box<dyn CongestionControl>),
}

/// `$call` on the scheme inside a [`Sender`].
macro_rules! each {
    ($s:expr, $c:ident => $call:expr) => {
        match $s {
            Sender::Line => {
                let $c = &mut Line;
                $call
            }
            Sender::Dcqcn($c) => $call,
            Sender::Nscc($c) => $call,
            Sender::Rccc($c) => $call,
            Sender::NsccRccc($c) => $call,
            Sender::Plugin($c) => $call,
        }
    };
}

/// As [`each`], for a shared borrow.
macro_rules! each_ref {
    ($s:expr, $c:ident => $call:expr) => {
        match $s {
            Sender::Line => {
                let $c = &Line;
                $call
            }
            Sender::Dcqcn($c) => $call,
            Sender::Nscc($c) => $call,
            Sender::Rccc($c) => $call,
            Sender::NsccRccc($c) => $call,
            Sender::Plugin($c) => $call,
        }
    };
}

impl CongestionControl for Sender {
    fn on_ack(&mut self, ack: &Ack) {
        each!(self, c => c.on_ack(ack))
    }
    fn on_sack(&mut self, s: &SackFeedback) {
        each!(self, c => c.on_sack(s))
    }
    fn on_nack(&mut self, now: Time) {
        each!(self, c => c.on_nack(now))
    }
    fn on_trim(&mut self, t: &Trim) {
        each!(self, c => c.on_trim(t))
    }
    fn on_cnp(&mut self, now: Time) -> Option<CnpOutcome> {
        each!(self, c => c.on_cnp(now))
    }
    fn on_timeout(&mut self, now: Time, lost: u64) {
        each!(self, c => c.on_timeout(now, lost))
    }
    fn on_timer(&mut self, now: Time) {
        each!(self, c => c.on_timer(now))
    }
    fn timer_due(&self) -> Option<Time> {
        each_ref!(self, c => c.timer_due())
    }
    #[inline]
    fn on_sent(&mut self, now: Time, wire: u64) {
        each!(self, c => c.on_sent(now, wire))
    }
    fn on_credit(&mut self, total: u64) -> u64 {
        each!(self, c => c.on_credit(total))
    }
    fn credit(&self) -> Option<i64> {
        each_ref!(self, c => c.credit())
    }
    fn pull_target(&self, backlog: u64, packet: u64) -> Option<u32> {
        each_ref!(self, c => c.pull_target(backlog, packet))
    }
    fn window(&self) -> Option<u64> {
        each_ref!(self, c => c.window())
    }
    #[inline]
    fn allows(&self, inflight: u64, size: u64) -> bool {
        each_ref!(self, c => c.allows(inflight, size))
    }
    #[inline]
    fn rate(&self) -> Option<BitRate> {
        each_ref!(self, c => c.rate())
    }
    fn asks_ack(&self, inflight: u64, mtu: u64, ack_bytes: u64) -> bool {
        each_ref!(self, c => c.asks_ack(inflight, mtu, ack_bytes))
    }
    fn loss_window(&self) -> Option<f64> {
        each_ref!(self, c => c.loss_window())
    }
    fn probe_clock(&self) -> Option<(Duration, Duration)> {
        each_ref!(self, c => c.probe_clock())
    }
    fn wants_int(&self) -> bool {
        each_ref!(self, c => c.wants_int())
    }
    fn echoes_ecn(&self) -> bool {
        each_ref!(self, c => c.echoes_ecn())
    }
    fn control_value(&self) -> f64 {
        each_ref!(self, c => c.control_value())
    }
}

/// What a run knows to build its flows' congestion control: each host's DCQCN and NSCC
/// parameters, RCCC's speculative credit, and each flow's path. Built once per run.
#[derive(Debug, Clone, Default)]
pub struct Senders {
    /// Per host: DCQCN's parameters (where RoCEv2 runs DCQCN) and NSCC's (where UET runs it).
    dcqcn: Vec<Option<Arc<DcqcnParams>>>,
    nscc: Vec<Option<Arc<NsccParams>>>,
    /// Per host: 1.5 BDP of the fabric's longest round trip at its rate: RCCC's speculative
    /// credit (and cap), and the ceiling UET's loss detection scales with.
    maxwnd: Vec<u64>,
    /// Per flow: its path's unloaded round trip and the switches on it.
    path_rtt: Vec<Duration>,
    path_hops: Vec<u8>,
    /// The longest unloaded round trip of any flow's path.
    network_rtt: Duration,
}

/// A flow about to start, as [`Senders::build`] needs it.
#[derive(Debug, Clone, Copy)]
pub struct Start {
    /// Its index among the run's flows, and its source host.
    pub flow: usize,
    pub host: usize,
    pub line_rate: BitRate,
    pub mtu: u32,
    pub size: u64,
    pub now: Time,
}

impl Senders {
    /// `dcqcn`, `nscc` and `maxwnd` per host; `path_rtt` and `path_hops` per flow.
    pub fn new(
        dcqcn: Vec<Option<Arc<DcqcnParams>>>,
        nscc: Vec<Option<Arc<NsccParams>>>,
        maxwnd: Vec<u64>,
        path_rtt: Vec<Duration>,
        path_hops: Vec<u8>,
        network_rtt: Duration,
    ) -> Self {
        Senders {
            dcqcn,
            nscc,
            maxwnd,
            path_rtt,
            path_hops,
            network_rtt,
        }
    }

    /// Per flow: its path's unloaded round trip and the switches on it.
    pub fn paths(&self) -> (&[Duration], &[u8]) {
        (&self.path_rtt, &self.path_hops)
    }

    /// The ceiling of UET's loss-detection window at `host` (1.5 BDP).
    pub fn maxwnd(&self, host: usize) -> u64 {
        self.maxwnd[host]
    }

    /// The congestion control `config` (the flow's transport's `nic.cc`) gives a flow that
    /// starts now.
    pub fn build(&self, config: &CcConfig, s: &Start) -> Sender {
        let path_rtt = self.path_rtt[s.flow];
        let nscc = || {
            let p = self.nscc[s.host]
                .clone()
                .expect("NSCC's parameters exist where it runs");
            NsccSender::new(p, s.now, path_rtt)
        };
        let rccc = || RcccSender::new(self.maxwnd[s.host]);
        match config {
            CcConfig::None => Sender::Line,
            CcConfig::Dcqcn(_) => match &self.dcqcn[s.host] {
                Some(p) => Sender::Dcqcn(Box::new(Dcqcn::new(p.clone(), s.line_rate, s.now))),
                None => Sender::Line,
            },
            CcConfig::Nscc(_) => Sender::Nscc(Box::new(nscc())),
            CcConfig::Rccc(_) => Sender::Rccc(Box::new(rccc())),
            CcConfig::NsccRccc { .. } => Sender::NsccRccc(Box::new(NsccRccc {
                nscc: nscc(),
                rccc: rccc(),
            })),
            plugin => {
                let ctx = Ctx {
                    line_rate: s.line_rate,
                    base_rtt: path_rtt,
                    network_rtt: self.network_rtt,
                    mtu: s.mtu,
                    hops: self.path_hops[s.flow] as u32,
                    size: s.size,
                };
                plugin.build(&ctx).map_or(Sender::Line, Sender::Plugin)
            }
        }
    }
}
