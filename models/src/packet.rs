//! The packet as it moves through the fabric: a small `Copy` value (40 bytes), never boxed,
//! moved between queues by value. No per-packet heap allocation anywhere on its path.
//!
//! Wire overheads follow the frame formats (see `../shared`-style references in the README):
//! a RoCEv2 data packet over IPv4 carries Ethernet 14 + IPv4 20 + UDP 8 + IB BTH 12 + ICRC 4 +
//! FCS 4 = 62 B of headers in the frame (InfiniBand Architecture Specification, Annex A17
//! "RoCEv2"), and every frame also occupies 20 B more on the wire: 8 B preamble/SFD and 12 B
//! inter-frame gap (IEEE 802.3 clause 4.4.2).

use crate::ids::{FlowId, HostId};
use sim_core::Time;

/// Preamble + start-of-frame delimiter (8 B) and minimum inter-frame gap (12 B): IEEE 802.3.
pub const PREAMBLE_IFG: u32 = 20;
/// Ethernet II header 14 B + FCS 4 B.
pub const ETH_OVERHEAD: u32 = 18;
/// IPv4 (20) + UDP (8).
pub const IPV4_UDP: u32 = 28;
/// InfiniBand Base Transport Header + invariant CRC (RoCEv2).
pub const BTH_ICRC: u32 = 16;
/// Headers of a RoCEv2 data packet in the frame: 62 B.
pub const ROCE_DATA_HEADERS: u32 = ETH_OVERHEAD + IPV4_UDP + BTH_ICRC;
/// ACK Extended Transport Header, carried by ACK/NAK packets.
pub const AETH: u32 = 4;
/// Minimum Ethernet frame (without preamble/IFG).
pub const MIN_FRAME: u32 = 64;

/// What a packet is, as far as the fabric and the transports care.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// Payload-carrying packet of a flow.
    Data,
    /// Cumulative acknowledgement: `seq` is the next packet the receiver expects.
    Ack,
}

/// Flag bits.
pub mod flags {
    /// The last packet of a message (RDMA "last" opcode; ACK requested).
    pub const LAST: u8 = 1 << 0;
}

/// A packet in flight. 40 bytes, `Copy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    /// When the sender put it on its first queue (echoed in ACKs for RTT samples).
    pub sent_at: Time,
    pub flow: FlowId,
    /// Packet sequence number within the flow (data) or cumulative ack (ACK).
    pub seq: u32,
    pub src: HostId,
    pub dst: HostId,
    /// Application bytes carried.
    pub payload: u32,
    /// Frame length on the wire without preamble and IFG: headers + payload (+ padding).
    pub frame: u32,
    /// Entropy: the UDP source port the ECMP hash sees (RoCEv2 and UET both put flow entropy here).
    pub entropy: u16,
    pub kind: Kind,
    /// 802.1p priority / traffic class, 0..=7.
    pub prio: u8,
    pub flags: u8,
}

impl Packet {
    /// Bytes the packet occupies on the wire, including preamble and inter-frame gap.
    #[inline]
    pub fn wire_bytes(&self) -> u64 {
        (self.frame + PREAMBLE_IFG) as u64
    }

    #[inline]
    pub fn is_last(&self) -> bool {
        self.flags & flags::LAST != 0
    }
}

/// Frame length of a RoCEv2 data packet with `payload` bytes.
#[inline]
pub fn roce_data_frame(payload: u32) -> u32 {
    (payload + ROCE_DATA_HEADERS).max(MIN_FRAME)
}

/// Frame length of a RoCEv2 ACK (BTH + AETH).
pub const fn roce_ack_frame() -> u32 {
    let f = ROCE_DATA_HEADERS + AETH;
    if f < MIN_FRAME { MIN_FRAME } else { f }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_stays_compact() {
        assert!(
            std::mem::size_of::<Packet>() <= 40,
            "{}",
            std::mem::size_of::<Packet>()
        );
    }

    #[test]
    fn roce_overheads_match_the_frame_format() {
        // 62 B in the frame, 82 B on the wire.
        assert_eq!(roce_data_frame(4096), 4096 + 62);
        assert_eq!(roce_data_frame(4096) + PREAMBLE_IFG, 4096 + 82);
        assert_eq!(roce_data_frame(1), 64, "padded to the 64 B minimum frame");
        assert_eq!(roce_ack_frame(), 66);
    }
}
