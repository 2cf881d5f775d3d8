//! Frames as they would appear on the wire, for packet captures that Wireshark dissects.
//!
//! The simulator moves compact [`Packet`]s; this module spells one out as bytes:
//! - Ethernet II (IEEE 802.3 clause 3), with an IEEE 802.1Q tag carrying the priority in its
//!   PCP when the fabric uses PFC; no FCS (as a Linux capture shows frames);
//! - IPv4 (RFC 791) with DSCP and the ECN field (RFC 3168: ECT(0) on ECN-capable data, CE once
//!   a switch marked it) and a correct header checksum; UDP (RFC 768);
//! - RoCEv2 (InfiniBand Architecture Specification vol. 1, ch. 9 and Annex A17) on UDP 4791: BTH
//!   (opcode, P_Key, destination QP, ack request, PSN), RETH on the first packet of an RDMA
//!   WRITE, AETH on ACK/NAK (syndrome 0x1F "ACK, no credit" / 0x60 "NAK: PSN sequence error"),
//!   the CNP (opcode 0x81, BECN set, 16 reserved bytes), and the ICRC: CRC-32 over the packet
//!   from the IP header with the variant fields (TOS, TTL, IP checksum, UDP checksum, BTH
//!   resv8a) masked to ones and 64 bits of ones in front (Annex A17.3.3);
//! - PFC (IEEE 802.1Qbb): MAC control EtherType 0x8808, opcode 0x0101, class-enable vector,
//!   eight pause-time quanta, to 01:80:C2:00:00:01;
//! - Ultra Ethernet on UDP 4793 (UE 1.0 PDS, layouts as the public xdp2 `uet/pds.h`): RUD_REQ
//!   (12 B) + a 44 B SES standard request header (opcode WRITE, SOM/EOM; other SES fields
//!   zero), ACK_CC with the SACK bitmap (32 B), NACK (code TRIMMED or TRIMMED_LASTHOP), and
//!   CONTROL/CREDIT for RCCC grants. A trimmed packet is as short as on the wire.
//! - UE link level retry's LLR_ACK, LLR_NACK, LLR_INIT and LLR_INIT_ECHO: on the wire they are 8 B 64b/66b control
//!   blocks the PCS inserts, not frames, so a pcap (Ethernet frames) cannot hold them as they
//!   are. An analyzer that decodes the PCS shows them; here each is written as a frame of its
//!   own: to 01:80:C2:00:00:01 from the sending port, IEEE 802's local experimental EtherType
//!   0x88B5, then the block's 8 bytes as a UE link format data model gives them (citing UE
//!   1.0.1 section 5.1.4, tables 5-7 and 5-8: block type 0x4B, 0x01 ACK, 0x02 NACK, 0x03 INIT
//!   or 0x04 INIT_ECHO (the INIT pair carrying the number the sender starts over at), the
//!   20-bit sequence number in bits 19..12, 11..4 and the high nibble of the fifth byte, O-code
//!   6 in its low nibble, three reserved bytes), padded to 60 B. The framing is this
//!   simulator's (docs/link-layer.md); the dissector in contrib/wireshark reads it.
//!
//! Addresses are synthetic and stable: host h has MAC 02:00:00:xx:xx:xx and IPv4 10.x.x.x with
//! x.x.x = h + 1; requester QP 0x100 + 2 * flow, responder QP one more. Payload bytes are zeros.
//! The model charges no RETH (16 B) on a message's first packet and no 802.1Q tag (4 B); the
//! capture shows both, so those frames are that much longer than the simulated ones.

mod link;

pub use link::LLR_ETHERTYPE;

use crate::ids::HostId;
use crate::nic::Transport;
use crate::packet::{Kind, Packet, flags};

/// What the encoder needs beyond the packet.
#[derive(Debug, Clone)]
pub struct FrameContext {
    pub transport: Transport,
    /// Each flow's transport when a second class mixes them (empty: all `transport`).
    pub per_flow: Vec<Transport>,
    /// 802.1Q-tag data frames (priorities in use).
    pub vlan: bool,
    /// Each flow's (source, destination) hosts.
    pub endpoints: Vec<(HostId, HostId)>,
}

pub const ROCE_PORT: u16 = 4791;
pub const UET_PORT: u16 = 4793;

/// Host MAC address.
pub fn host_mac(h: HostId) -> [u8; 6] {
    let x = h.0 + 1;
    [0x02, 0, 0, (x >> 16) as u8, (x >> 8) as u8, x as u8]
}

/// Host IPv4 address.
pub fn host_ip(h: HostId) -> [u8; 4] {
    let x = h.0 + 1;
    [10, (x >> 16) as u8, (x >> 8) as u8, x as u8]
}

/// MAC of a switch or NIC port (PFC frames come from ports).
pub fn port_mac(port: u32) -> [u8; 6] {
    let b = port.to_be_bytes();
    [0x02, 0xfe, b[0], b[1], b[2], b[3]]
}

/// Frame check sequence: counted in the model's frame, not shown in a capture.
const FCS: usize = 4;

/// Requester (sender) and responder QP numbers of a flow.
pub fn qpns(flow: u32) -> (u32, u32) {
    let r = 0x100 + 2 * flow;
    (r & 0xff_ffff, (r + 1) & 0xff_ffff)
}

/// RC RDMA WRITE and other IBA opcodes (IBA table 38).
mod op {
    pub const WRITE_FIRST: u8 = 0x06;
    pub const WRITE_MIDDLE: u8 = 0x07;
    pub const WRITE_LAST: u8 = 0x08;
    pub const WRITE_ONLY: u8 = 0x0a;
    pub const ACK: u8 = 0x11;
    pub const CNP: u8 = 0x81;
}

/// Write the frame for `pkt` into `out` (cleared first). `sender_port` is the port that put
/// it on the wire (PFC frames carry its MAC).
pub fn encode(
    ctx: &FrameContext,
    pkt: &Packet,
    int: Option<&crate::int::IntStack>,
    sender_port: u32,
    out: &mut Vec<u8>,
) {
    out.clear();
    if pkt.is_link_control() || pkt.kind == Kind::LlrCtl {
        return link::encode(pkt, sender_port, out);
    }
    let (s, d) = ctx
        .endpoints
        .get(pkt.flow.0 as usize)
        .copied()
        .unwrap_or((HostId(0), pkt.dst));
    let forward = pkt.dst == d;
    let (src, dst) = if forward { (s, d) } else { (d, s) };
    out.extend_from_slice(&host_mac(dst));
    out.extend_from_slice(&host_mac(src));
    if ctx.vlan {
        out.extend_from_slice(&0x8100u16.to_be_bytes());
        out.extend_from_slice(&((pkt.prio as u16) << 13).to_be_bytes());
    }
    out.extend_from_slice(&0x0800u16.to_be_bytes());
    let ip_at = out.len();
    // The L4 body, then the headers in front of it.
    let mut body = Vec::with_capacity(64);
    let transport = ctx
        .per_flow
        .get(pkt.flow.0 as usize)
        .copied()
        .unwrap_or(ctx.transport);
    let port = match transport {
        Transport::Roce => {
            if let Some(stack) = int {
                int_md(stack, pkt.prio, &mut body);
            }
            roce(pkt, &mut body);
            ROCE_PORT
        }
        Transport::Uet => {
            uet(pkt, forward, &mut body);
            UET_PORT
        }
    };
    // Payload bytes (zeros); a trimmed packet has none left. RoCEv2 pads the payload to a
    // multiple of 4 B (BTH PadCnt, IBA 9.2.2) so the ICRC is aligned.
    if pkt.kind == Kind::Data {
        body.resize(body.len() + pkt.payload as usize, 0);
        if port == ROCE_PORT {
            let pad = (4 - pkt.payload as usize % 4) % 4;
            let bth_at = int.map_or(0, |s| s.bytes() as usize);
            body[bth_at + 1] |= (pad as u8) << 4;
            body.resize(body.len() + pad, 0);
        }
    }
    let dscp = pkt.dscp;
    let ecn = if pkt.has(flags::CE) {
        3
    } else if pkt.has(flags::ECT) {
        2
    } else {
        0
    };
    let icrc_len = if port == ROCE_PORT { 4 } else { 0 };
    let udp_len = 8 + body.len() + icrc_len;
    let total = 20 + udp_len;
    let ip = ipv4(
        dscp << 2 | ecn,
        total as u16,
        pkt.seq as u16,
        host_ip(src),
        host_ip(dst),
    );
    out.extend_from_slice(&ip);
    let sport = if pkt.entropy != 0 {
        pkt.entropy
    } else {
        0xc000 | (pkt.flow.0 as u16 & 0x3fff)
    };
    out.extend_from_slice(&sport.to_be_bytes());
    let dport = if int.is_some() { crate::int::UDP_PORT } else { port };
    out.extend_from_slice(&dport.to_be_bytes());
    out.extend_from_slice(&(udp_len as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0]); // UDP checksum: zero, as RoCEv2 NICs send it
    out.extend_from_slice(&body);
    if port == ROCE_PORT {
        let crc = icrc(&out[ip_at..]);
        out.extend_from_slice(&crc.to_le_bytes());
    }
    // Ethernet padding to the minimum frame (60 B without FCS).
    if out.len() < 60 {
        out.resize(60, 0);
    }
}

/// INT-MD over UDP (INT Dataplane Specification v2.1 sections 5.6-5.8): the shim (type 1,
/// NPT 1, the original destination port 4791), the metadata header (version 2, Hop ML 5,
/// instructions 3 and 5, two domain-specific words) and the records, newest first.
fn int_md(stack: &crate::int::IntStack, prio: u8, out: &mut Vec<u8>) {
    use crate::int::{HOP_BYTES, MAX_HOPS};
    let hops = stack.hops();
    let words = (12 + HOP_BYTES as usize * hops.len()) / 4;
    out.push(1 << 4 | 1 << 2);
    out.push(words as u8);
    out.extend_from_slice(&ROCE_PORT.to_be_bytes());
    let full = hops.len() >= MAX_HOPS;
    let word0: u32 = 2 << 28 | u32::from(full) << 26 | (HOP_BYTES / 4) << 8 | (MAX_HOPS - hops.len()) as u32;
    out.extend_from_slice(&word0.to_be_bytes());
    out.extend_from_slice(&(1u16 << (15 - 3) | 1 << (15 - 5)).to_be_bytes()); // instructions
    out.extend_from_slice(&0x4850u16.to_be_bytes()); // domain "HP": HPCC's byte counter, rate
    out.extend_from_slice(&0xc000u16.to_be_bytes()); // DS instructions 0 and 1
    out.extend_from_slice(&[0, 0]); // DS flags
    for h in hops.iter().rev() {
        let occupancy = h.qlen.min(0xff_ffff) as u32;
        out.extend_from_slice(&(u32::from(prio) << 24 | occupancy).to_be_bytes());
        out.extend_from_slice(&(h.ts.0 / 1000).to_be_bytes());
        out.extend_from_slice(&(h.tx_bytes as u32).to_be_bytes());
        out.extend_from_slice(&((h.rate.0 / 1_000_000) as u32).to_be_bytes());
    }
}

fn ipv4(tos: u8, total: u16, id: u16, src: [u8; 4], dst: [u8; 4]) -> [u8; 20] {
    let mut h = [0u8; 20];
    h[0] = 0x45;
    h[1] = tos;
    h[2..4].copy_from_slice(&total.to_be_bytes());
    h[4..6].copy_from_slice(&id.to_be_bytes());
    h[6] = 0x40; // don't fragment
    h[8] = 64; // TTL
    h[9] = 17; // UDP
    h[12..16].copy_from_slice(&src);
    h[16..20].copy_from_slice(&dst);
    let sum = internet_checksum(&h);
    h[10..12].copy_from_slice(&sum.to_be_bytes());
    h
}

/// RFC 1071 ones'-complement sum.
pub fn internet_checksum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = bytes
        .chunks(2)
        .map(|c| u32::from(c[0]) << 8 | u32::from(*c.get(1).unwrap_or(&0)))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// RoCEv2 ICRC over `ip` (IP header onwards, without the ICRC), IBA Annex A17.3.3.
pub fn icrc(ip: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&[0xff; 8]);
    let mut head = [0u8; 20 + 8 + 12];
    let n = head.len().min(ip.len());
    head[..n].copy_from_slice(&ip[..n]);
    head[1] = 0xff; // TOS
    head[8] = 0xff; // TTL
    head[10] = 0xff; // IP checksum
    head[11] = 0xff;
    head[26] = 0xff; // UDP checksum
    head[27] = 0xff;
    head[32] = 0xff; // BTH resv8a (FECN, BECN, reserved)
    h.update(&head[..n]);
    h.update(&ip[n..]);
    h.finalize()
}

fn bth(out: &mut Vec<u8>, opcode: u8, becn: bool, dest_qp: u32, ack_req: bool, psn: u32) {
    out.push(opcode);
    out.push(0x40); // SE 0, MigReq 1, PadCnt 0, TVer 0
    out.extend_from_slice(&0xffffu16.to_be_bytes()); // default P_Key
    out.push(if becn { 0x40 } else { 0 });
    out.extend_from_slice(&dest_qp.to_be_bytes()[1..]);
    out.push(if ack_req { 0x80 } else { 0 });
    out.extend_from_slice(&(psn & 0xff_ffff).to_be_bytes()[1..]);
}

fn roce(pkt: &Packet, out: &mut Vec<u8>) {
    let (req, resp) = qpns(pkt.flow.0);
    match pkt.kind {
        Kind::Data => {
            let first = pkt.seq == 0;
            let last = pkt.is_last();
            let opcode = match (first, last) {
                (true, true) => op::WRITE_ONLY,
                (true, false) => op::WRITE_FIRST,
                (false, true) => op::WRITE_LAST,
                (false, false) => op::WRITE_MIDDLE,
            };
            bth(out, opcode, false, resp, last || pkt.has(flags::ACK_REQ), pkt.seq);
            if first {
                // RETH: virtual address, R_Key, DMA length (the model does not track them).
                out.extend_from_slice(&[0u8; 16]);
            }
        }
        Kind::Ack | Kind::Nak => {
            let nak = pkt.kind == Kind::Nak;
            let psn = if nak { pkt.seq } else { pkt.seq.wrapping_sub(1) };
            bth(out, op::ACK, false, req, false, psn);
            out.push(if nak { 0x60 } else { 0x1f });
            out.extend_from_slice(&[0, 0, 0]); // MSN
        }
        Kind::Cnp => {
            bth(out, op::CNP, true, req, false, 0);
            out.extend_from_slice(&[0u8; 16]);
        }
        Kind::Credit | Kind::Pause | Kind::Probe | Kind::LlrCtl | Kind::LinkCredit => {}
    }
}

/// PDS prologue word: type (5 bits), next header or control type (4), flags (7).
fn pds_word(kind: u16, next: u16, flags: u16) -> [u8; 2] {
    (kind << 11 | next << 7 | flags).to_be_bytes()
}

/// The UET body of `pkt`; `forward` when it travels from the flow's sender to its receiver
/// (a credit packet that way is a request to send).
fn uet(pkt: &Packet, forward: bool, out: &mut Vec<u8>) {
    let pdc = (pkt.flow.0 as u16).wrapping_add(1);
    match pkt.kind {
        Kind::Data => {
            // RUD_REQ (2), next header REQUEST_STD (3); flags: retrans bit 4, ackreq bit 3.
            let f = (pkt.has(flags::RETX) as u16) << 4 | (pkt.has(flags::ACK_REQ) as u16) << 3;
            out.extend_from_slice(&pds_word(2, 3, f));
            out.extend_from_slice(&[0, 0]); // clear_psn_offset
            out.extend_from_slice(&pkt.seq.to_be_bytes());
            out.extend_from_slice(&pdc.to_be_bytes());
            out.extend_from_slice(&pdc.to_be_bytes());
            // SES standard request: opcode WRITE; SOM on the first packet, EOM on the last.
            let mut ses = [0u8; 44];
            ses[0] = 0x01;
            ses[1] = u8::from(pkt.seq == 0) | u8::from(pkt.is_last()) << 1;
            out.extend_from_slice(&ses);
        }
        Kind::Ack => {
            // ACK_CC (8); flags: m (the request was ECN-marked) bit 5, retx (an ACK of a
            // retransmitted request) bit 4, p (it answers a probe) bit 3.
            let f = (pkt.has(flags::CE) as u16) << 5
                | (pkt.has(flags::RETX) as u16) << 4
                | (pkt.has(flags::PROBE_ACK) as u16) << 3;
            out.extend_from_slice(&pds_word(8, 0, f));
            out.extend_from_slice(&[0, 0]); // ack_psn_offset
            out.extend_from_slice(&pkt.seq.to_be_bytes()); // cumulative ACK PSN
            out.extend_from_slice(&pdc.to_be_bytes());
            out.extend_from_slice(&pdc.to_be_bytes());
            out.push(0); // cc_type NSCC
            out.push(0); // mpr
            out.extend_from_slice(&(pkt.sack_base().wrapping_sub(pkt.seq) as u16).to_be_bytes());
            out.extend_from_slice(&pkt.sack_bitmap().to_be_bytes());
            out.extend_from_slice(&[0u8; 8]); // CC state
        }
        Kind::Nak => {
            // NACK (10): code TRIMMED (1) or TRIMMED_LASTHOP (2); flags: retx bit 4, the NACKed
            // packet was a retransmission (UE 1.0 PDS NACK header; xdp2 uet/pds.h).
            out.extend_from_slice(&pds_word(10, 0, (pkt.has(flags::RETX) as u16) << 4));
            out.push(if pkt.has(flags::LAST_HOP) { 2 } else { 1 });
            out.push(0);
            out.extend_from_slice(&pkt.seq.to_be_bytes());
            out.extend_from_slice(&pdc.to_be_bytes());
            out.extend_from_slice(&pdc.to_be_bytes());
            out.extend_from_slice(&[0u8; 4]);
        }
        Kind::Credit => {
            // CONTROL (11), control type CREDIT (7) from the receiver, CREDIT_REQ (8) from the
            // sender; the payload word is the running total granted or the pull target.
            out.extend_from_slice(&pds_word(11, if forward { 8 } else { 7 }, 0));
            out.extend_from_slice(&[0, 0]);
            out.extend_from_slice(&pkt.seq.to_be_bytes());
            out.extend_from_slice(&pdc.to_be_bytes());
            out.extend_from_slice(&pdc.to_be_bytes());
            // The grant (a credit) or the pull target (a request to send): the same word.
            out.extend_from_slice(&pkt.credit().to_be_bytes());
        }
        Kind::Probe => {
            // CONTROL (11), control type PROBE (6); probe_opaque: the probe's number.
            out.extend_from_slice(&pds_word(11, 6, 0));
            out.extend_from_slice(&(pkt.seq as u16).to_be_bytes());
            out.extend_from_slice(&[0u8; 4]); // psn
            out.extend_from_slice(&pdc.to_be_bytes());
            out.extend_from_slice(&pdc.to_be_bytes());
        }
        Kind::Cnp | Kind::Pause | Kind::LlrCtl | Kind::LinkCredit => {}
    }
}

/// pcap file header (nanosecond timestamps, Ethernet).
pub fn file_header(snaplen: u32) -> [u8; 24] {
    let mut h = [0u8; 24];
    h[0..4].copy_from_slice(&0xa1b2_3c4du32.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes());
    h[6..8].copy_from_slice(&4u16.to_le_bytes());
    h[16..20].copy_from_slice(&snaplen.to_le_bytes());
    h[20..24].copy_from_slice(&1u32.to_le_bytes()); // LINKTYPE_ETHERNET
    h
}

/// pcap record header for a frame of `len` bytes captured at `ns`, cut to `snaplen`.
pub fn record_header(ns: u64, len: usize, snaplen: u32) -> [u8; 16] {
    let mut h = [0u8; 16];
    h[0..4].copy_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
    h[4..8].copy_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
    h[8..12].copy_from_slice(&(len.min(snaplen as usize) as u32).to_le_bytes());
    h[12..16].copy_from_slice(&(len as u32).to_le_bytes());
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::FlowId;

    fn ctx(t: Transport, vlan: bool) -> FrameContext {
        FrameContext {
            transport: t,
            per_flow: Vec::new(),
            vlan,
            endpoints: vec![(HostId(1), HostId(2))],
        }
    }

    #[test]
    fn int_md_sits_after_udp_with_the_original_port_in_the_shim() {
        use crate::int::{IntHop, IntPool};
        let mut pool = IntPool::default();
        let r = pool.alloc();
        for q in [1000u64, 2000] {
            pool.push(r);
            pool.stamp(
                r,
                IntHop {
                    ts: sim_core::Time(q * 1000),
                    tx_bytes: q * 10,
                    qlen: q,
                    rate: sim_core::BitRate::gbps(100),
                },
            );
        }
        let stack = *pool.get(r);
        let mut p = Packet::control(Kind::Data, FlowId(0), HostId(2), 5, 0, 3);
        p.payload = 1024;
        p.frame = (crate::packet::roce_data_frame(1024) + stack.bytes()) as u16;
        let mut out = Vec::new();
        encode(&ctx(Transport::Roce, false), &p, Some(&stack), 0, &mut out);
        assert_eq!(
            out.len(),
            p.frame as usize - 4,
            "the frame the model charged, less FCS"
        );
        let udp = 14 + 20;
        assert_eq!(
            u16::from_be_bytes([out[udp + 2], out[udp + 3]]),
            crate::int::UDP_PORT
        );
        let shim = udp + 8;
        assert_eq!(out[shim] >> 4, 1, "INT-MD");
        assert_eq!(out[shim + 1] as u32 * 4, 12 + 2 * 20, "length: MD header + stack");
        assert_eq!(u16::from_be_bytes([out[shim + 2], out[shim + 3]]), ROCE_PORT);
        let md = shim + 4;
        assert_eq!(out[md] >> 4, 2, "version 2");
        assert_eq!((out[md + 2] & 0x1f) as u32, 5, "Hop ML 5 words");
        // Newest record first: the second switch's queue (2000 B) at the top of the stack.
        let first = md + 12;
        assert_eq!(
            u32::from_be_bytes(out[first..first + 4].try_into().unwrap()) & 0xff_ffff,
            2000
        );
        assert_eq!(
            u64::from_be_bytes(out[first + 4..first + 12].try_into().unwrap()),
            2000
        );
        // The BTH follows the stack.
        assert_eq!(out[first + 40], op::WRITE_MIDDLE);
    }

    #[test]
    fn ip_checksum_verifies_to_zero() {
        // RFC 1071: summing a header with its checksum gives 0xffff (complement 0).
        let h = ipv4(0x6a, 1078, 7, [10, 0, 0, 2], [10, 0, 0, 3]);
        assert_eq!(internet_checksum(&h), 0);
    }

    #[test]
    fn frame_lengths_follow_the_model() {
        let mut out = Vec::new();
        let mut p = Packet::control(
            Kind::Data,
            FlowId(0),
            HostId(2),
            5,
            crate::packet::roce_data_frame(1024),
            3,
        );
        p.payload = 1024;
        encode(&ctx(Transport::Roce, false), &p, None, 0, &mut out);
        assert_eq!(out.len(), 1024 + 62 - 4);
        encode(&ctx(Transport::Roce, true), &p, None, 0, &mut out);
        assert_eq!(out.len(), 1024 + 62 - 4 + 4);
        assert_eq!(u16::from_be_bytes([out[14], out[15]]) >> 13, 3);
        // The IP total length matches the bytes after the Ethernet header.
        let ip = 18;
        assert_eq!(
            u16::from_be_bytes([out[ip + 2], out[ip + 3]]) as usize,
            out.len() - ip
        );
        let ack = Packet::control(
            Kind::Ack,
            FlowId(0),
            HostId(1),
            9,
            crate::packet::roce_ack_frame(),
            3,
        );
        encode(&ctx(Transport::Roce, false), &ack, None, 0, &mut out);
        assert_eq!(out.len(), crate::packet::roce_ack_frame() as usize - 4);
        // Sent back to the source: addresses swap.
        assert_eq!(out[0..6], host_mac(HostId(1)));
    }

    #[test]
    fn icrc_is_crc32_of_the_masked_packet() {
        let mut out = Vec::new();
        let p = Packet::control(
            Kind::Cnp,
            FlowId(0),
            HostId(1),
            0,
            crate::packet::roce_cnp_frame(),
            6,
        );
        encode(&ctx(Transport::Roce, false), &p, None, 0, &mut out);
        let ip = &out[14..out.len() - 4];
        let mut masked = vec![0xffu8; 8];
        masked.extend_from_slice(ip);
        for i in [8 + 1, 8 + 8, 8 + 10, 8 + 11, 8 + 26, 8 + 27, 8 + 32] {
            masked[i] = 0xff;
        }
        let stored = u32::from_le_bytes(out[out.len() - 4..].try_into().unwrap());
        assert_eq!(stored, crc32fast::hash(&masked));
        // The Linux rxe formulation (rxe_icrc.c): a raw CRC-32 register seeded with 0xdebb20e3
        // (the 64 one-bits already absorbed) over the masked packet, inverted. In crc32fast's
        // terms that is a hasher resumed from !0xdebb20e3.
        let mut rxe = crc32fast::Hasher::new_with_initial(!0xdebb_20e3u32);
        rxe.update(&masked[8..]);
        assert_eq!(stored, rxe.finalize());
    }

    #[test]
    fn llr_ordered_sets_carry_their_type_and_20_bit_sequence_number() {
        let mut out = Vec::new();
        encode(
            &ctx(Transport::Roce, true),
            &crate::llr::Ctl {
                kind: crate::llr::CtlKind::Nack,
                seq: 0xabcde,
            }
            .packet(),
            None,
            7,
            &mut out,
        );
        assert_eq!(out.len(), 60);
        assert_eq!(out[12..14], [0x88, 0xb5]);
        assert_eq!(out[14..22], [0x4b, 0x02, 0xab, 0xcd, 0xe6, 0, 0, 0]);
        encode(
            &ctx(Transport::Uet, false),
            &crate::llr::Ctl {
                kind: crate::llr::CtlKind::Ack,
                seq: 5,
            }
            .packet(),
            None,
            7,
            &mut out,
        );
        assert_eq!(out[14..19], [0x4b, 0x01, 0, 0, 0x56]);
        // LLR_INIT (type 3) and LLR_INIT_ECHO (type 4) carry the number the sender starts at.
        for (kind, ty) in [(crate::llr::CtlKind::Init, 3), (crate::llr::CtlKind::InitEcho, 4)] {
            encode(
                &ctx(Transport::Uet, false),
                &crate::llr::Ctl { kind, seq: 0x12345 }.packet(),
                None,
                7,
                &mut out,
            );
            assert_eq!(out[14..19], [0x4b, ty, 0x12, 0x34, 0x56]);
        }
    }

    #[test]
    fn pfc_frames_carry_the_priority_and_quanta() {
        let mut out = Vec::new();
        let p = Packet::pause(3, 0xffff, crate::ids::PortId(0));
        encode(&ctx(Transport::Roce, true), &p, None, 7, &mut out);
        assert_eq!(out.len(), 60);
        assert_eq!(out[12..16], [0x88, 0x08, 0x01, 0x01]);
        assert_eq!(u16::from_be_bytes([out[16], out[17]]), 1 << 3);
        assert_eq!(u16::from_be_bytes([out[18 + 6], out[18 + 7]]), 0xffff);
    }
}
