//! `[nic]`: the adapter's settings (its model, transport, MTU, ACK coalescing, congestion
//! control, retransmission timer, receive buffer, load balancing), and a second traffic class
//! with its own transport (`nic.class`).
//!
//! **A second traffic class** with its own transport: RoCEv2 and UET flows sharing one fabric.
//!
//! `nic.class = { prio = 1, transport = "uet", cc = { kind = "nscc" }, lb = { kind = "reps" } }`
//! gives the flows of 802.1p priority `prio` that transport, congestion control and load
//! balancing; every other flow uses `nic.transport`, `nic.cc` and `nic.lb`. This is how a
//! converged fabric separates them: each transport in its own traffic class (its own
//! priority, PG and queue), PFC only on the RoCEv2 one (`pfc.priorities`), trimming acting
//! only on UET packets (they alone carry the trimmable mark), and the switch's scheduler
//! between the classes (`switch.scheduler`). UET's own spec places it on its own traffic
//! class (UEC 1.0, "Traffic classes"), and SONiC maps each DSCP to its TC, PG and queue.

use super::lb::LbConfig;
use super::model;
use crate::cc::CcConfig;
use crate::error::FieldError;
use serde::Deserialize;
use sim_core::{BitRate, Bytes, Duration};

/// Where a frame's priority is read from (`nic.trust`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Trust {
    /// The 802.1Q tag's PCP.
    #[default]
    Pcp,
    /// The IP header's DSCP; frames go untagged.
    Dscp,
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
    /// A named adapter (ConnectX-6 Dx, ConnectX-7): its fastest port bounds the host links,
    /// and it supplies the DCQCN preset and receive buffer not written here.
    #[serde(default)]
    pub model: Option<model::NicModel>,
    /// RoCEv2 or UET.
    #[serde(default)]
    pub transport: Transport,
    /// Payload bytes per packet (the RoCE path MTU).
    #[serde(default = "default_mtu")]
    pub mtu: Bytes,
    /// The receiver acknowledges every `ack_every` packets, and always the last one.
    #[serde(default = "one")]
    pub ack_every: u32,
    /// Send this share of data packets with ECN CE already set, as a traffic generator does
    /// to drive DCQCN without a switch (a homelab DAC): packet k of a flow is marked when
    /// floor((k + 1) x share) > floor(k x share), so marks are evenly spaced.
    #[serde(default)]
    pub ce_share: Option<f64>,
    /// Congestion control.
    #[serde(default)]
    pub cc: CcConfig,
    /// A second traffic class with the other transport (`class.rs`): its flows' priority,
    /// transport, congestion control and load balancing.
    #[serde(default)]
    pub class: Option<ClassConfig>,
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
    /// Default: the model's, else 256 KiB ([`NicConfig::rx_buffer`]).
    #[serde(default)]
    pub rx_buffer: Option<Bytes>,
    /// Entropy (path) selection per packet.
    #[serde(default)]
    pub lb: LbConfig,
    /// UET: the receiver acknowledges every this many bytes of new data (uet-htsim 16 KiB).
    #[serde(default = "default_ack_bytes")]
    pub ack_bytes: Bytes,
    /// UET retransmission timeout's floor and first value. Default: 15 us + 6 network RTTs
    /// (uet-htsim's 15 us + 6 queue drains with a one-BDP queue). It adapts to the measured
    /// round trip above that (RFC 6298) and doubles on each expiry (`nic/uet/rto.rs`).
    #[serde(default)]
    pub rto: Option<Duration>,
    /// UET: the longest the retransmission timeout may grow to by backing off.
    #[serde(default = "default_rto_max")]
    pub rto_max: Duration,
    /// UET: expiries without progress before a PDC gives up (UE PDS `Max_RTO_Retx_Cnt`).
    #[serde(default = "default_rto_retries")]
    pub rto_retries: u32,
    /// UET: the receiver acknowledges data that no ACK has covered after this long (default:
    /// one network round trip).
    #[serde(default)]
    pub ack_timeout: Option<Duration>,
    /// UET with RCCC: a sender out of credit with data to send and no credit arriving asks
    /// the receiver again (a request to send) after this long, doubling while none comes
    /// (default: the retransmission timeout's floor).
    #[serde(default)]
    pub credit_timeout: Option<Duration>,
    /// UET: 802.1p priority of ACKs, NACKs and credits (control, ahead of data).
    #[serde(default = "default_control_prio")]
    pub control_prio: u8,
    /// How frames carry their priority: `pcp` (an 802.1Q tag, mlx5's default trust) or
    /// `dscp` (untagged, the class read from the IP DSCP: `mlnx_qos --trust dscp`, the usual
    /// SONiC setting). With `dscp`, switches classify by `switch.dscp_to_tc`.
    #[serde(default)]
    pub trust: Trust,
}

/// 100 ms: far above any round trip, far below a run's length.
fn default_rto_max() -> Duration {
    Duration(100 * 1_000_000_000)
}
/// UE 1.0 PDS `Max_RTO_Retx_Cnt` default (xdp2's spec configuration table).
fn default_rto_retries() -> u32 {
    5
}
fn default_ack_bytes() -> Bytes {
    Bytes(16_384)
}
fn default_control_prio() -> u8 {
    7
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

/// True when data packet `k` of a flow leaves CE-marked under `nic.ce_share = share`.
#[inline]
pub fn ce_marked(k: u32, share: f64) -> bool {
    ((k as f64 + 1.0) * share).floor() > (k as f64 * share).floor()
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            model: None,
            mtu: default_mtu(),
            ack_every: 1,
            ce_share: None,
            cc: CcConfig::None,
            class: None,
            local_ack_timeout: default_timeout(),
            window: None,
            rx_rate: None,
            rx_buffer: None,
            transport: Transport::Roce,
            lb: LbConfig::default(),
            ack_bytes: default_ack_bytes(),
            rto: None,
            rto_max: default_rto_max(),
            rto_retries: default_rto_retries(),
            ack_timeout: None,
            credit_timeout: None,
            control_prio: default_control_prio(),
            trust: Trust::Pcp,
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
        if let Some(p) = self.ce_share.filter(|p| !(*p > 0.0 && *p <= 1.0)) {
            return Err(FieldError::new(
                "nic.ce_share",
                format!("must be a share in (0, 1], got {p}"),
            ));
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
        if self.rx_buffer().0 < 2 * 9216 {
            return Err(FieldError::new(
                "nic.rx_buffer",
                format!("must hold at least two jumbo frames, got {}", self.rx_buffer()),
            ));
        }
        self.cc.validate("nic.cc", self.transport == Transport::Uet)?;
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
        for (key, d) in [
            ("nic.rto", self.rto),
            ("nic.rto_max", Some(self.rto_max)),
            ("nic.ack_timeout", self.ack_timeout),
            ("nic.credit_timeout", self.credit_timeout),
        ] {
            if d == Some(Duration::ZERO) {
                return Err(FieldError::new(key, "must be greater than zero"));
            }
        }
        if self.rto_retries == 0 {
            return Err(FieldError::new("nic.rto_retries", "must be at least 1"));
        }
        self.validate_class()?;
        if self.control_prio > 7 {
            return Err(FieldError::new(
                "nic.control_prio",
                format!("802.1p priorities are 0..=7, got {}", self.control_prio),
            ));
        }
        Ok(())
    }

    /// The receive buffer per port: as written, else the model's, else 256 KiB (the order
    /// of a ConnectX port's buffer, our estimate; mlx5 exposes it as the `buffer_size` of
    /// `mlnx_qos`).
    pub fn rx_buffer(&self) -> Bytes {
        self.rx_buffer
            .or(self.model.map(|m| m.profile().rx_buffer))
            .unwrap_or(model::CONNECTX_RX_BUFFER)
    }

    /// The DCQCN preset a `cc = { kind = "dcqcn" }` without one uses: the model's, else
    /// ConnectX firmware's.
    pub fn dcqcn_preset(&self) -> crate::cc::dcqcn::DcqcnPreset {
        self.model
            .map_or(crate::cc::dcqcn::DcqcnPreset::Connectx, |m| m.profile().dcqcn)
    }

    /// Largest frame this NIC sends: a full-MTU data packet of its transport (of either,
    /// with a second class).
    pub fn max_frame(&self) -> u32 {
        let mtu = self.mtu.0 as u32;
        let roce = self
            .uses(Transport::Roce)
            .then(|| crate::packet::roce_data_frame(mtu));
        let uet = self
            .uses(Transport::Uet)
            .then(|| crate::packet::uet_data_frame(mtu));
        roce.max(uet).unwrap_or(0)
    }

    /// The retransmission timeout: 4.096 us x 2^local_ack_timeout (IBA 9.7.6.1.3).
    pub fn rto(&self) -> Duration {
        Duration(4_096_000 << self.local_ack_timeout)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassConfig {
    pub prio: u8,
    pub transport: Transport,
    #[serde(default)]
    pub cc: CcConfig,
    #[serde(default)]
    pub lb: LbConfig,
}

impl NicConfig {
    fn class_of(&self, prio: u8) -> Option<&ClassConfig> {
        self.class.as_ref().filter(|c| c.prio == prio)
    }

    /// The transport of flows at `prio`.
    pub fn transport_of(&self, prio: u8) -> Transport {
        self.class_of(prio).map_or(self.transport, |c| c.transport)
    }

    /// The load balancing of flows at `prio`.
    pub fn lb_of(&self, prio: u8) -> &LbConfig {
        self.class_of(prio).map_or(&self.lb, |c| &c.lb)
    }

    /// Whether any flow may use transport `t`.
    pub fn uses(&self, t: Transport) -> bool {
        self.transport == t || self.class.as_ref().is_some_and(|c| c.transport == t)
    }

    /// The congestion control of transport `t`'s flows (`CcConfig::None` if none use it).
    pub fn cc_for(&self, t: Transport) -> &CcConfig {
        const NONE: &CcConfig = &CcConfig::None;
        match &self.class {
            _ if self.transport == t => &self.cc,
            Some(c) if c.transport == t => &c.cc,
            _ => NONE,
        }
    }

    /// Both transports in one run.
    pub fn mixed(&self) -> bool {
        self.class.is_some()
    }

    pub(super) fn validate_class(&self) -> Result<(), FieldError> {
        let Some(c) = &self.class else { return Ok(()) };
        if c.prio > 7 {
            return Err(FieldError::new(
                "nic.class.prio",
                format!("802.1p priorities are 0..=7, got {}", c.prio),
            ));
        }
        if c.prio == self.control_prio {
            return Err(FieldError::new(
                "nic.class.prio",
                format!(
                    "priority {} carries the NICs' control frames (nic.control_prio)",
                    c.prio
                ),
            ));
        }
        if c.transport == self.transport {
            return Err(FieldError::new(
                "nic.class.transport",
                "the class is for the other transport: nic.transport already sets this one",
            ));
        }
        c.cc.validate("nic.class.cc", c.transport == Transport::Uet)?;
        if !c.lb.evs.is_power_of_two() || c.lb.evs > 16384 {
            return Err(FieldError::new(
                "nic.class.lb.evs",
                format!("must be a power of two from 1 to 16384, got {}", c.lb.evs),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rto_follows_the_verbs_encoding() {
        let c = NicConfig {
            local_ack_timeout: 14,
            ..Default::default()
        };
        assert_eq!(c.rto(), Duration(4_096_000 * 16_384)); // 67.1 ms
    }
}
