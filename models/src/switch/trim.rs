//! Packet trimming (NDP, Handley et al., SIGCOMM 2017; UE 1.0 packet trimming; uet-htsim
//! `CompositeQueue`): instead of dropping a data packet its queue cannot take, the switch cuts
//! its payload and forwards the headers at high priority, so the receiver learns of the loss
//! within one trip and NACKs it, and the sender resends at once instead of waiting for a
//! timeout. Only packets marked trimmable (UET data) are trimmed; anything else is dropped.

use crate::error::FieldError;
use crate::packet::{Packet, UET_DATA_HEADERS, flags};
use serde::Deserialize;
use sim_core::Bytes;

/// `[switch.trim]`: trimming on when present.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrimConfig {
    /// Trim a data packet when its egress queue already holds this much (default: only when
    /// the buffer would otherwise drop it).
    #[serde(default)]
    pub threshold: Option<Bytes>,
    /// Bytes of the packet kept: its headers (UET data headers by default; uet-htsim uses 64 B).
    #[serde(default)]
    pub size: Option<Bytes>,
    /// Priority trimmed headers are forwarded at.
    #[serde(default = "seven")]
    pub priority: u8,
    /// Share of trims over the threshold that cut the packet at the queue's tail and admit
    /// the arrival in its place (default 0: the arrival is cut, as a switch that trims at
    /// enqueue does). NDP's switches and uet-htsim's `CompositeQueue` cut the tail half the
    /// time (`drand() < 0.5`) so that which arrivals find the queue full does not follow the
    /// phase of the links feeding it (Floyd and Jacobson, "On traffic phase effects in
    /// packet-switched gateways", 1992): without it, a sender whose resend comes back a few
    /// microseconds after its trim finds the queue full again far more often than the others.
    #[serde(default)]
    pub tail: f64,
}

fn seven() -> u8 {
    7
}

impl TrimConfig {
    pub fn validate(&self) -> Result<(), FieldError> {
        if self.priority > 7 {
            return Err(FieldError::new(
                "switch.trim.priority",
                format!("802.1p priorities are 0..=7, got {}", self.priority),
            ));
        }
        if !(0.0..=1.0).contains(&self.tail) {
            return Err(FieldError::new(
                "switch.trim.tail",
                format!("a share between 0 and 1, got {}", self.tail),
            ));
        }
        if self.size.is_some_and(|s| !(64..=512).contains(&s.0)) {
            return Err(FieldError::new(
                "switch.trim.size",
                "must be between 64B and 512B",
            ));
        }
        Ok(())
    }

    /// Should a trimmable packet be trimmed before queueing, given its queue's depth?
    #[inline]
    pub fn over_threshold(&self, queued: u64) -> bool {
        self.threshold.is_some_and(|t| queued >= t.0)
    }

    /// Cut `p` to its headers, at the trim priority.
    #[inline]
    pub fn trim(&self, p: &mut Packet, last_hop: bool) {
        let keep = self.size.map_or(UET_DATA_HEADERS, |s| s.0 as u32) as u16;
        p.frame = p.frame.min(keep);
        p.payload = 0;
        p.prio = self.priority;
        p.flags = (p.flags | flags::TRIMMED) & !flags::TRIMMABLE & !flags::CE;
        if last_hop {
            p.flags |= flags::LAST_HOP;
        }
    }
}

/// Can this packet be trimmed?
#[inline]
pub fn trimmable(p: &Packet) -> bool {
    p.has(flags::TRIMMABLE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::*;
    use crate::packet::Kind;

    #[test]
    fn trimming_keeps_headers_and_raises_priority() {
        let cfg = TrimConfig {
            threshold: Some(Bytes(1000)),
            size: None,
            priority: 7,
            tail: 0.0,
        };
        let mut p = Packet::control(Kind::Data, FlowId(1), HostId(2), 9, 4198, 3);
        p.payload = 4096;
        p.flags = flags::TRIMMABLE | flags::ECT;
        assert!(trimmable(&p) && cfg.over_threshold(1000) && !cfg.over_threshold(999));
        cfg.trim(&mut p, true);
        assert_eq!(
            (p.frame as u32, p.payload, p.prio, p.seq),
            (UET_DATA_HEADERS, 0, 7, 9)
        );
        assert!(p.has(flags::TRIMMED) && p.has(flags::LAST_HOP) && !trimmable(&p));
    }
}
