//! The link's own frames in a capture: PFC pause frames (IEEE 802.1Qbb), CBFC credit updates
//! and LLR's ordered sets (see the module docs above for what each holds and why an ordered
//! set is written as a frame of its own).

use super::{FCS, port_mac};
use crate::packet::{Kind, Packet};

/// Where MAC control frames go (IEEE 802.1Qbb's and 802.3x's reserved multicast address).
const PFC_DST: [u8; 6] = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x01];

/// MAC control (IEEE 802.3 clause 31).
const MAC_CONTROL: u16 = 0x8808;

/// IEEE 802 local experimental EtherType 1: the frame an LLR ordered set is written in.
pub const LLR_ETHERTYPE: u16 = 0x88b5;

/// `pkt`, a PFC frame, a CBFC credit update or an LLR ordered set, sent by `sender_port`,
/// as the bytes of a frame without its FCS.
pub(super) fn encode(pkt: &Packet, sender_port: u32, out: &mut Vec<u8>) {
    let ethertype = if pkt.kind == Kind::LlrCtl {
        LLR_ETHERTYPE
    } else {
        MAC_CONTROL
    };
    out.extend_from_slice(&PFC_DST);
    out.extend_from_slice(&port_mac(sender_port));
    out.extend_from_slice(&ethertype.to_be_bytes());
    match pkt.kind {
        Kind::LlrCtl => {
            llr_ctlos(pkt, out);
            out.resize(60, 0);
            return;
        }
        Kind::Pause => pfc(pkt, out),
        _ => cbfc_update(pkt, out),
    }
    out.resize((pkt.frame as usize).saturating_sub(FCS).max(60), 0);
}

/// A CBFC credit update. The UE frame format was not available: written as a MAC control
/// frame with the placeholder opcode 0xFFFF, the VC's priority (u16) and the cumulative
/// credit limit (u32), so a capture shows when and what was sent.
fn cbfc_update(pkt: &Packet, out: &mut Vec<u8>) {
    out.extend_from_slice(&0xffffu16.to_be_bytes());
    out.extend_from_slice(&(pkt.prio as u16).to_be_bytes());
    out.extend_from_slice(&pkt.seq.to_be_bytes());
}

/// PFC: opcode 0x0101, the class-enable vector, eight pause times in quanta.
fn pfc(pkt: &Packet, out: &mut Vec<u8>) {
    out.extend_from_slice(&0x0101u16.to_be_bytes());
    out.extend_from_slice(&(1u16 << pkt.prio).to_be_bytes());
    for p in 0..8u8 {
        let q = if p == pkt.prio { pkt.quanta() } else { 0 };
        out.extend_from_slice(&q.to_be_bytes());
    }
}

/// An LLR control block's 8 bytes (type 0x01 LLR_ACK, 0x02 LLR_NACK, 0x03 LLR_INIT, 0x04
/// LLR_INIT_ECHO).
fn llr_ctlos(pkt: &Packet, out: &mut Vec<u8>) {
    use crate::llr::CtlKind;
    let seq = pkt.seq & 0xf_ffff;
    let kind = match crate::llr::Ctl::of(pkt).kind {
        CtlKind::Ack => 0x01,
        CtlKind::Nack => 0x02,
        CtlKind::Init => 0x03,
        CtlKind::InitEcho => 0x04,
    };
    out.extend_from_slice(&[
        0x4b,
        kind,
        (seq >> 12) as u8,
        (seq >> 4) as u8,
        ((seq & 0xf) as u8) << 4 | 0x6,
        0,
        0,
        0,
    ]);
}
