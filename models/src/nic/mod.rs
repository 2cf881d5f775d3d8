//! Host NIC: packetization, the send scheduler, and the configuration of the RoCEv2 transport.
//!
//! Messages are cut into MTU-sized packets (RoCEv2: the path MTU counts payload only, 4096 B
//! on ConnectX by default) and sent at line rate, or at the QP's DCQCN rate. The NIC pulls:
//! when its port finishes a frame it sends first any queued control frames (ACKs, NAKs, CNPs,
//! forwarded packets), then the next data packet of the next ready flow: strict priority across
//! traffic classes the peer has not paused, round robin across QPs within one, as the ConnectX
//! send arbiter serves QPs. Rate-limited QPs sleep until their next transmit time. So the NIC
//! never holds more than one frame per port: flows wait in the NIC, not in a queue of packets.

pub mod lb;
pub mod roce;
pub mod rx;
pub mod uet;

use crate::cc::dcqcn::DcqcnConfig;
use crate::cc::nscc::NsccConfig;
use crate::cc::rccc::RcccConfig;
use crate::error::FieldError;
use crate::ids::FlowId;
use lb::LbConfig;
use serde::Deserialize;
use sim_core::{BitRate, Bytes, Duration, Time};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Congestion control of the NIC's flows.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum CcConfig {
    /// Line rate, no reaction to congestion.
    #[default]
    None,
    /// DCQCN (Zhu et al., SIGCOMM 2015) as ConnectX implements it (RoCEv2).
    Dcqcn(Box<DcqcnConfig>),
    /// UET sender-based NSCC.
    Nscc(NsccConfig),
    /// UET receiver credit-based RCCC.
    Rccc(RcccConfig),
    /// NSCC and RCCC together.
    NsccRccc {
        #[serde(default)]
        nscc: NsccConfig,
        #[serde(default)]
        rccc: RcccConfig,
    },
}

impl CcConfig {
    pub fn nscc(&self) -> Option<&NsccConfig> {
        match self {
            CcConfig::Nscc(c) | CcConfig::NsccRccc { nscc: c, .. } => Some(c),
            _ => None,
        }
    }
    pub fn rccc(&self) -> Option<&RcccConfig> {
        match self {
            CcConfig::Rccc(c) | CcConfig::NsccRccc { rccc: c, .. } => Some(c),
            _ => None,
        }
    }
}

/// The transport protocol of every flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Transport {
    /// RoCEv2 RC: go-back-N, per-flow entropy.
    #[default]
    Roce,
    /// Ultra Ethernet PDS RUD: selective repeat, per-packet entropy, trimming-aware.
    Uet,
}

/// `[nic]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NicConfig {
    /// RoCEv2 or UET.
    #[serde(default)]
    pub transport: Transport,
    /// Payload bytes per packet (the RoCE path MTU).
    #[serde(default = "default_mtu")]
    pub mtu: Bytes,
    /// The receiver acknowledges every `ack_every` packets, and always the last one.
    #[serde(default = "one")]
    pub ack_every: u32,
    /// Congestion control.
    #[serde(default)]
    pub cc: CcConfig,
    /// Retransmission timeout exponent: 4.096 us x 2^n (the verbs QP attribute `timeout`).
    #[serde(default = "default_timeout")]
    pub local_ack_timeout: u8,
    /// Cap on unacknowledged bytes per QP (default: none, as on ConnectX).
    #[serde(default)]
    pub window: Option<Bytes>,
    /// How fast the host takes received data from the NIC (PCIe / memory), if slower than the
    /// link. Unset: as fast as the link delivers, and the NIC never buffers.
    #[serde(default)]
    pub rx_rate: Option<BitRate>,
    /// The NIC's receive buffer per port, used when `rx_rate` is set. A lossless priority
    /// sends XOFF when the buffer's free space falls to the headroom the cable needs.
    #[serde(default = "default_rx_buffer")]
    pub rx_buffer: Bytes,
    /// Entropy (path) selection per packet.
    #[serde(default)]
    pub lb: LbConfig,
    /// UET: the receiver acknowledges every this many bytes of new data (uet-htsim 16 KiB).
    #[serde(default = "default_ack_bytes")]
    pub ack_bytes: Bytes,
    /// UET retransmission timeout. Default: 15 us + 6 network RTTs (uet-htsim's
    /// 15 us + 6 queue drains with a one-BDP queue).
    #[serde(default)]
    pub rto: Option<Duration>,
    /// UET: 802.1p priority of ACKs, NACKs and credits (control, ahead of data).
    #[serde(default = "default_control_prio")]
    pub control_prio: u8,
}

fn default_ack_bytes() -> Bytes {
    Bytes(16_384)
}
fn default_control_prio() -> u8 {
    7
}

/// 256 KiB: the order of a ConnectX port's receive buffer (our estimate; mlx5 exposes it as
/// the `buffer_size` of `mlnx_qos`).
fn default_rx_buffer() -> Bytes {
    Bytes(256 * 1024)
}

fn default_mtu() -> Bytes {
    Bytes(4096)
}
fn one() -> u32 {
    1
}
/// 14: 67 ms, the value most RDMA applications set (perftest's default).
fn default_timeout() -> u8 {
    14
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            mtu: default_mtu(),
            ack_every: 1,
            cc: CcConfig::None,
            local_ack_timeout: default_timeout(),
            window: None,
            rx_rate: None,
            rx_buffer: default_rx_buffer(),
            transport: Transport::Roce,
            lb: LbConfig::default(),
            ack_bytes: default_ack_bytes(),
            rto: None,
            control_prio: default_control_prio(),
        }
    }
}

impl NicConfig {
    pub fn validate(&self) -> Result<(), FieldError> {
        if !(64..=9000).contains(&self.mtu.0) {
            return Err(FieldError::new(
                "nic.mtu",
                format!("must be between 64B and 9000B, got {}", self.mtu),
            ));
        }
        if self.ack_every == 0 {
            return Err(FieldError::new("nic.ack_every", "must be at least 1"));
        }
        if !(1..=31).contains(&self.local_ack_timeout) {
            return Err(FieldError::new(
                "nic.local_ack_timeout",
                format!("must be 1..=31, got {}", self.local_ack_timeout),
            ));
        }
        if self
            .window
            .is_some_and(|w| w.0 < self.ack_every as u64 * self.mtu.0)
        {
            return Err(FieldError::new(
                "nic.window",
                format!(
                    "must hold at least ack_every ({}) MTUs, or the receiver never acknowledges a full window",
                    self.ack_every
                ),
            ));
        }
        if self.rx_buffer.0 < 2 * 9216 {
            return Err(FieldError::new(
                "nic.rx_buffer",
                format!("must hold at least two jumbo frames, got {}", self.rx_buffer),
            ));
        }
        let uet = self.transport == Transport::Uet;
        match (&self.cc, uet) {
            (CcConfig::Dcqcn(_), true) => {
                return Err(FieldError::new(
                    "nic.cc",
                    "DCQCN is RoCEv2's: with transport = \"uet\" use nscc, rccc or nscc-rccc",
                ));
            }
            (CcConfig::Nscc(_) | CcConfig::Rccc(_) | CcConfig::NsccRccc { .. }, false) => {
                return Err(FieldError::new(
                    "nic.cc",
                    "NSCC and RCCC need transport = \"uet\"",
                ));
            }
            _ => {}
        }
        if !self.lb.evs.is_power_of_two() || self.lb.evs > 16384 {
            return Err(FieldError::new(
                "nic.lb.evs",
                format!(
                    "must be a power of two from 1 to 16384 (the 14 free bits of a UDP source port in 49152-65535), got {}",
                    self.lb.evs
                ),
            ));
        }
        if self.cc.nscc().and_then(|c| c.qa_gate).is_some_and(|g| g > 16) {
            return Err(FieldError::new("nic.cc.qa_gate", "must be at most 16"));
        }
        if self.ack_bytes.0 == 0 {
            return Err(FieldError::new("nic.ack_bytes", "must be greater than zero"));
        }
        if self.rto == Some(Duration::ZERO) {
            return Err(FieldError::new("nic.rto", "must be greater than zero"));
        }
        if self.control_prio > 7 {
            return Err(FieldError::new(
                "nic.control_prio",
                format!("802.1p priorities are 0..=7, got {}", self.control_prio),
            ));
        }
        Ok(())
    }

    /// Largest frame this NIC sends: a full-MTU data packet of its transport.
    pub fn max_frame(&self) -> u32 {
        match self.transport {
            Transport::Roce => crate::packet::roce_data_frame(self.mtu.0 as u32),
            Transport::Uet => crate::packet::uet_data_frame(self.mtu.0 as u32),
        }
    }

    /// The retransmission timeout: 4.096 us x 2^local_ack_timeout (IBA 9.7.6.1.3).
    pub fn rto(&self) -> Duration {
        Duration(4_096_000 << self.local_ack_timeout)
    }
}

/// One port's scheduler: a round-robin list of ready flows per priority, and the
/// rate-limited flows asleep until their next transmit time.
#[derive(Debug, Clone, Default)]
struct PortSched {
    ready: [VecDeque<FlowId>; 8],
    ready_mask: u8,
    sleeping: BinaryHeap<Reverse<(Time, FlowId)>>,
    /// A wake-up event is scheduled at this time.
    wake_at: Option<Time>,
}

/// Per-host send scheduler.
#[derive(Debug, Clone, Default)]
pub struct Nic {
    first_port: u32,
    ports: Vec<PortSched>,
}

impl Nic {
    pub fn new(first_port: u32, ports: usize) -> Self {
        Nic {
            first_port,
            ports: vec![PortSched::default(); ports],
        }
    }

    #[inline]
    fn sched(&mut self, port: u32) -> &mut PortSched {
        &mut self.ports[(port - self.first_port) as usize]
    }

    /// `f` (priority `prio`) may send now on `port`.
    #[inline]
    pub fn make_ready(&mut self, port: u32, prio: u8, f: FlowId) {
        let s = self.sched(port);
        s.ready[prio as usize].push_back(f);
        s.ready_mask |= 1 << prio;
    }

    /// `f` may send on `port` from `at`.
    pub fn sleep(&mut self, port: u32, f: FlowId, at: Time) {
        self.sched(port).sleeping.push(Reverse((at, f)));
    }

    /// The next flow to serve on `port` at `now`, skipping priorities in `paused`: wakes the
    /// flows whose time has come (`wake(flow, time)` returns the flow's priority if that entry
    /// is current), then strict priority, round robin within a priority. The flow leaves the scheduler; the caller puts
    /// it back if it can send again.
    #[inline]
    pub fn next_ready(
        &mut self,
        port: u32,
        now: Time,
        paused: u8,
        mut wake: impl FnMut(FlowId, Time) -> Option<u8>,
    ) -> Option<FlowId> {
        let s = self.sched(port);
        while let Some(&Reverse((t, f))) = s.sleeping.peek() {
            if t > now {
                break;
            }
            s.sleeping.pop();
            // A flow re-paced earlier after a rate increase leaves a stale entry behind.
            if let Some(p) = wake(f, t) {
                s.ready[p as usize].push_back(f);
                s.ready_mask |= 1 << p;
            }
        }
        let eligible = s.ready_mask & !paused;
        if eligible == 0 {
            return None;
        }
        let p = 7 - eligible.leading_zeros() as usize;
        let f = s.ready[p].pop_front();
        if s.ready[p].is_empty() {
            s.ready_mask &= !(1 << p);
        }
        f
    }

    /// When `port` should next be woken for a sleeping flow, if no wake-up at or before that
    /// time is already scheduled. Records the wake-up as scheduled.
    pub fn wake_needed(&mut self, port: u32) -> Option<Time> {
        let s = self.sched(port);
        let next = s.sleeping.peek().map(|Reverse((t, _))| *t)?;
        if s.wake_at.is_some_and(|w| w <= next) {
            return None;
        }
        s.wake_at = Some(next);
        Some(next)
    }

    /// The wake-up event for `port` fired.
    pub fn woken(&mut self, port: u32, now: Time) {
        let s = self.sched(port);
        if s.wake_at.is_some_and(|w| w <= now) {
            s.wake_at = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_priority_round_robin_within_a_priority() {
        let mut nic = Nic::new(10, 2);
        nic.make_ready(10, 3, FlowId(1));
        nic.make_ready(10, 3, FlowId(2));
        nic.make_ready(10, 6, FlowId(5));
        nic.make_ready(11, 3, FlowId(3));
        let prio = |f: FlowId, _| Some(if f.0 == 5 { 6 } else { 3 });
        assert_eq!(nic.next_ready(10, Time(0), 0, prio), Some(FlowId(5)));
        let a = nic.next_ready(10, Time(0), 0, prio).unwrap();
        nic.make_ready(10, 3, a);
        assert_eq!(nic.next_ready(10, Time(0), 0, prio), Some(FlowId(2)));
        assert_eq!(
            nic.next_ready(10, Time(0), 1 << 3, prio),
            None,
            "priority 3 paused"
        );
        assert_eq!(nic.next_ready(10, Time(0), 0, prio), Some(FlowId(1)));
        assert_eq!(nic.next_ready(11, Time(0), 0, prio), Some(FlowId(3)));
    }

    #[test]
    fn sleeping_flows_wake_at_their_time() {
        let mut nic = Nic::new(0, 1);
        nic.sleep(0, FlowId(7), Time(100));
        assert_eq!(nic.next_ready(0, Time(50), 0, |_, _| Some(3)), None);
        assert_eq!(nic.wake_needed(0), Some(Time(100)));
        assert_eq!(nic.wake_needed(0), None, "already scheduled");
        nic.woken(0, Time(100));
        assert_eq!(nic.next_ready(0, Time(100), 0, |_, _| Some(3)), Some(FlowId(7)));
        nic.sleep(0, FlowId(8), Time(200));
        assert_eq!(
            nic.next_ready(0, Time(300), 0, |_, _| None),
            None,
            "stale entries are skipped"
        );
    }

    #[test]
    fn rto_follows_the_verbs_encoding() {
        let c = NicConfig {
            local_ack_timeout: 14,
            ..Default::default()
        };
        assert_eq!(c.rto(), Duration(4_096_000 * 16_384)); // 67.1 ms
    }
}
