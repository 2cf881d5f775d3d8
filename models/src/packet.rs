//! The packet as it moves through the fabric: a small `Copy` value (48 bytes), never boxed,
//! moved between queues by value. No per-packet heap allocation anywhere on its path.
//!
//! Wire overheads follow the frame formats (the references cited beside each constant):
//! a RoCEv2 data packet over IPv4 carries Ethernet 14 + IPv4 20 + UDP 8 + IB BTH 12 + ICRC 4 +
//! FCS 4 = 62 B of headers in the frame (InfiniBand Architecture Specification, Annex A17
//! "RoCEv2"), and every frame also occupies 20 B more on the wire: 8 B preamble/SFD and 12 B
//! inter-frame gap (IEEE 802.3 clause 4.4.2).

use crate::ids::{FlowId, HostId, PortId};
use sim_core::Time;

/// Preamble + start-of-frame delimiter (8 B) and minimum inter-frame gap (12 B): IEEE 802.3.
pub const PREAMBLE_IFG: u32 = 20;
/// Bytes a frame of `frame` bytes occupies on the wire: the frame plus preamble, SFD and gap.
#[inline]
pub const fn on_wire(frame: u32) -> u64 {
    (frame + PREAMBLE_IFG) as u64
}

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

/// CNP: BTH (opcode 0x81) + 16 reserved bytes (IBA Annex A17.9.3).
pub const CNP_PAYLOAD: u32 = 16;
/// An IEEE 802.1Qbb PFC frame: a 64 B MAC control frame.
pub const PFC_FRAME: u32 = 64;
/// A UE LLR control ordered set (LLR_ACK, LLR_NACK): one 64b/66b control block, 8 B of the
/// MAC's stream, inserted by the PCS with no preamble or gap of its own ([`crate::llr`]).
pub const LLR_CTLOS: u32 = 8;

/// What a packet is, as far as the fabric and the transports care.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// Payload-carrying packet of a flow.
    Data,
    /// Cumulative acknowledgement: `seq` is the next PSN the receiver expects.
    Ack,
    /// Negative acknowledgement (PSN sequence error): `seq` is the PSN expected.
    Nak,
    /// DCQCN congestion notification packet for the flow's QP.
    Cnp,
    /// PFC frame for priority `prio`: `seq` carries the pause quanta (0 = XON).
    Pause,
    /// RCCC credit from a receiver: `aux` bytes the sender may send.
    Credit,
    /// UET probe from a sender (a PDS control packet of type PROBE, UE 1.0): the receiver
    /// answers at once with a selective ACK flagged [`flags::PROBE_ACK`].
    Probe,
    /// A CBFC credit update for VC `prio` (`crate::cbfc`): `seq` carries the receiver's
    /// cumulative credit limit, modulo 2^32. A link-level control frame, like PFC's.
    LinkCredit,
    /// A UE link-level-retry control ordered set (LLR_ACK, or LLR_NACK when `flags` is
    /// [`flags::LLR_NACK`]) for the cable's other direction: `seq` is the link sequence number
    /// it acknowledges ([`crate::llr`]). Not a frame: an 8 B ordered set the PCS inserts.
    LlrCtl,
}

/// Flag bits.
pub mod flags {
    /// The last packet of a message (RDMA "last" opcode; ACK requested).
    pub const LAST: u8 = 1 << 0;
    /// ECN-capable transport (IP ECN = ECT(0)).
    pub const ECT: u8 = 1 << 1;
    /// Congestion experienced (IP ECN = CE), set by a switch.
    pub const CE: u8 = 1 << 2;
    /// A retransmission.
    pub const RETX: u8 = 1 << 3;
    /// A switch may trim this packet instead of dropping it (UET data).
    pub const TRIMMABLE: u8 = 1 << 4;
    /// The payload was cut by a switch; only the headers remain.
    pub const TRIMMED: u8 = 1 << 5;
    /// Trimmed by the switch next to the destination (UET NACK code TRIMMED_LAST_HOP).
    pub const LAST_HOP: u8 = 1 << 6;
    /// ACK request (UET PDS `AR`): acknowledge at once.
    pub const ACK_REQ: u8 = 1 << 7;
    /// On a UET ACK (which never carries an ACK request): it answers a probe (PDS ACK `p`).
    pub const PROBE_ACK: u8 = ACK_REQ;
    /// On an LLR control ordered set: a negative acknowledgement (LLR_NACK).
    pub const LLR_NACK: u8 = 1 << 0;
    /// On an LLR control ordered set: the sender's LLR_INIT.
    pub const LLR_INIT: u8 = 1 << 1;
    /// On an LLR control ordered set: the receiver's LLR_INIT_ECHO.
    pub const LLR_INIT_ECHO: u8 = 1 << 2;
}

/// Which buffer account a switch charged the packet to (see `switch::mmu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Charge {
    #[default]
    None,
    PgMin,
    QueueMin,
    Shared,
    Headroom,
}

/// A packet in flight. 48 bytes, `Copy`.
///
/// There is no source address: the flow names both ends, and the ECMP hash uses the flow,
/// the destination and the entropy (equivalent to a 5-tuple for every flow the model has).
/// Fields whose meaning depends on the kind are private and read through accessors named for
/// what they carry ([`Packet::quanta`], [`Packet::sack_base`], [`Packet::credit`], ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    /// When the sender put it on its first queue (echoed in ACKs for RTT samples).
    pub sent_at: Time,
    /// UET selective-ACK bitmap: bit i acknowledges PSN `sack_base() + i`; on data packets
    /// and RoCEv2 ACK/NAKs, the packet's INT stack ([`Packet::int_ref`]).
    sack_bitmap: u64,
    pub flow: FlowId,
    /// Packet sequence number (data), the PSN acknowledged (ACK/NAK), or pause quanta (PFC).
    pub seq: u32,
    pub dst: HostId,
    /// The SACK bitmap's base PSN (UET ACK), credit bytes (RCCC credit), or the sender's
    /// cumulative pull target in quanta (UET data, RTS).
    aux: u32,
    /// Port the packet entered the current switch by (buffer accounting, PFC).
    pub in_port: PortId,
    /// Application bytes carried.
    pub payload: u16,
    /// Frame length on the wire without preamble and IFG: headers + payload (+ padding).
    pub frame: u16,
    /// Entropy: the UDP source port the ECMP hash sees (RoCEv2 and UET both put flow entropy here).
    pub entropy: u16,
    pub kind: Kind,
    /// 802.1p priority / traffic class, 0..=7.
    pub prio: u8,
    pub flags: u8,
    /// Buffer account charged at the current switch.
    pub charge: Charge,
    /// The IP header's DSCP, which a switch classifying by DSCP (`switch.dscp_to_tc`) turns
    /// into the packet's class: by default `prio << 3 | 2` (26 for priority 3, the common
    /// RoCEv2 marking), a CNP's `cnp_dscp`.
    pub dscp: u8,
}

/// The DSCP a NIC marks a frame of priority `prio` with: `prio << 3 | 2` (26 for priority 3,
/// the RoCEv2 marking NVIDIA's RoCE configuration guides use).
#[inline]
pub const fn dscp_of(prio: u8) -> u8 {
    (prio & 7) << 3 | 2
}

impl Packet {
    /// Bytes the packet occupies on the wire, including preamble and inter-frame gap (an LLR
    /// ordered set has neither: its 8 B are all it takes).
    #[inline]
    pub fn wire_bytes(&self) -> u64 {
        if self.kind == Kind::LlrCtl {
            return self.frame as u64;
        }
        on_wire(self.frame as u32)
    }

    #[inline]
    pub fn is_last(&self) -> bool {
        self.flags & flags::LAST != 0
    }

    #[inline]
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// A control packet of `kind` to `dst` for `flow`, with `frame` bytes.
    pub fn control(kind: Kind, flow: FlowId, dst: HostId, seq: u32, frame: u32, prio: u8) -> Packet {
        Packet {
            sent_at: Time::ZERO,
            sack_bitmap: 0,
            flow,
            seq,
            dst,
            aux: 0,
            in_port: PortId::NONE,
            payload: 0,
            frame: frame as u16,
            entropy: 0,
            kind,
            prio,
            flags: 0,
            charge: Charge::None,
            dscp: dscp_of(prio),
        }
    }

    /// A data packet of `flow` to `dst`: PSN `seq`, `payload` bytes in a `frame`-byte frame.
    #[allow(clippy::too_many_arguments)]
    pub fn data(
        flow: FlowId,
        dst: HostId,
        seq: u32,
        payload: u16,
        frame: u16,
        entropy: u16,
        prio: u8,
        flags: u8,
        sent_at: Time,
    ) -> Packet {
        Packet {
            sent_at,
            payload,
            entropy,
            flags,
            ..Packet::control(Kind::Data, flow, dst, seq, frame as u32, prio)
        }
    }

    /// An IEEE 802.1Qbb PFC frame for `prio` asking for `quanta` (0: XON). It belongs to no
    /// flow and no host; `origin`, the port whose XOFF started its chain of pauses, is
    /// simulator metadata ([`Packet::pause_origin`]).
    pub fn pause(prio: u8, quanta: u16, origin: PortId) -> Packet {
        let mut p = Packet::control(
            Kind::Pause,
            FlowId::NONE,
            HostId(0),
            quanta as u32,
            PFC_FRAME,
            prio,
        );
        p.aux = origin.0;
        p
    }

    /// A CBFC credit update for VC `prio` advertising the cumulative credit `limit`.
    pub fn link_credit(prio: u8, limit: u32) -> Packet {
        Packet::control(
            Kind::LinkCredit,
            FlowId::NONE,
            HostId(0),
            limit,
            MIN_FRAME, // the format is unknown: costed as a minimum frame, as PFC's
            prio,
        )
    }

    /// A link-level control frame (PFC, a CBFC credit update): it goes ahead of data, is
    /// never paused and never leaves its cable.
    #[inline]
    pub fn is_link_control(&self) -> bool {
        matches!(self.kind, Kind::Pause | Kind::LinkCredit)
    }

    /// An LLR control ordered set ([`crate::llr::Ctl`] makes and reads them): `flags` says
    /// which, `seq` is the link sequence number it carries; 8 B on the wire, at priority 7
    /// (it is never paused).
    pub fn llr_ctl(flags: u8, seq: u32) -> Packet {
        let mut p = Packet::control(Kind::LlrCtl, FlowId::NONE, HostId(0), seq, LLR_CTLOS, 7);
        p.flags = flags;
        p
    }

    /// The pause time a PFC frame requests, in quanta (0 = XON).
    #[inline]
    pub fn quanta(&self) -> u16 {
        debug_assert_eq!(self.kind, Kind::Pause);
        self.seq as u16
    }

    /// The port whose XOFF started the chain of pauses a PFC frame belongs to (simulator
    /// metadata, not on the wire: `crate::pfc_watch` names each storm's origin with it).
    pub fn pause_origin(&self) -> PortId {
        debug_assert_eq!(self.kind, Kind::Pause);
        PortId(self.aux)
    }

    /// UET selective ACK: PSN `base + i` for every bit i of `bitmap` (the cumulative PSN is `seq`).
    #[inline]
    pub fn set_sack(&mut self, base: u32, bitmap: u64) {
        (self.aux, self.sack_bitmap) = (base, bitmap);
    }

    /// The INT stack this packet carries (`crate::int::IntPool`; 0: none). Meaningful on
    /// data packets and on RoCEv2 ACK/NAKs (a UET ACK's field is its SACK bitmap).
    #[inline]
    pub fn int_ref(&self) -> crate::int::IntRef {
        self.sack_bitmap as u32
    }

    #[inline]
    pub fn set_int_ref(&mut self, r: crate::int::IntRef) {
        self.sack_bitmap = r as u64;
    }

    /// The SACK bitmap's base PSN.
    #[inline]
    pub fn sack_base(&self) -> u32 {
        self.aux
    }

    #[inline]
    pub fn sack_bitmap(&self) -> u64 {
        self.sack_bitmap
    }

    /// RCCC: the credit (wire bytes) a credit packet grants.
    #[inline]
    pub fn credit(&self) -> u32 {
        self.aux
    }

    #[inline]
    pub fn set_credit(&mut self, bytes: u32) {
        self.aux = bytes;
    }

    /// RCCC: the sender's cumulative pull target, in credit quanta, carried by its data
    /// packets and requests to send.
    #[inline]
    pub fn pull_target(&self) -> u32 {
        self.aux
    }

    #[inline]
    pub fn set_pull_target(&mut self, quanta: u32) {
        self.aux = quanta;
    }
}

/// Frame length of a RoCEv2 data packet with `payload` bytes.
#[inline]
pub fn roce_data_frame(payload: u32) -> u32 {
    (payload + ROCE_DATA_HEADERS).max(MIN_FRAME)
}

/// Frame length of a RoCEv2 ACK or NAK (BTH + AETH).
pub const fn roce_ack_frame() -> u32 {
    let f = ROCE_DATA_HEADERS + AETH;
    if f < MIN_FRAME { MIN_FRAME } else { f }
}

/// Frame length of a RoCEv2 CNP.
pub const fn roce_cnp_frame() -> u32 {
    ROCE_DATA_HEADERS + CNP_PAYLOAD
}

/// UET over UDP/IPv4 (UE 1.0 section 3; header layouts as in the xdp2 project's
/// `uet/pds.h` and `ses.h`): PDS request header 12 B + SES standard header 44 B.
pub const UET_DATA_HEADERS: u32 = ETH_OVERHEAD + IPV4_UDP + 12 + 44;
/// PDS ACK with the ACK_CC extension and its 64-bit SACK bitmap: 32 B.
pub const UET_ACK_FRAME: u32 = ETH_OVERHEAD + IPV4_UDP + 32;
/// PDS NACK: 16 B (padded to the minimum frame).
pub const UET_NACK_FRAME: u32 = if ETH_OVERHEAD + IPV4_UDP + 16 < MIN_FRAME {
    MIN_FRAME
} else {
    ETH_OVERHEAD + IPV4_UDP + 16
};
/// RCCC credit (a PDS control packet carrying the grant): 16 B.
pub const UET_CREDIT_FRAME: u32 = UET_NACK_FRAME;
/// A probe (a PDS control packet, no payload word): 12 B, padded as the credit is.
pub const UET_PROBE_FRAME: u32 = UET_NACK_FRAME;

/// Frame length of a UET data packet with `payload` bytes; a trimmed one keeps its headers.
#[inline]
pub fn uet_data_frame(payload: u32) -> u32 {
    (payload + UET_DATA_HEADERS).max(MIN_FRAME)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_stays_compact() {
        assert!(
            std::mem::size_of::<Packet>() <= 48,
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
        assert_eq!(roce_cnp_frame(), 78);
    }
}
