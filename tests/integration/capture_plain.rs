//! The same captures checked without Wireshark, so every machine checks them: the pcap
//! container read by its published layout, every frame parsed by the `etherparse` crate
//! (Ethernet II, 802.1Q, IPv4 with its header checksum, UDP lengths), and the transport
//! headers decoded by their specifications' offsets (IBA vol. 1 9.2-9.4 for BTH and AETH,
//! Annex A17 for the CNP; IEEE 802.1Qbb for PFC; UE 1.0 PDS for the prologue), written here
//! apart from `models::pcap`. The tshark tests (`capture.rs`) add Wireshark's dissectors.

use crate::capture::{ROCE, UET, run};
use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use std::collections::BTreeMap;
use std::path::Path;

/// One frame of a capture: time (ns) and bytes.
pub(crate) struct Frame {
    pub(crate) ns: u64,
    pub(crate) bytes: Vec<u8>,
}

/// Read a pcap by its layout: a 24-byte header (magic 0xa1b23c4d: nanosecond timestamps;
/// version 2.4; link type 1, Ethernet), then 16-byte record headers.
pub(crate) fn read_pcap(path: &Path) -> Vec<Frame> {
    let b = std::fs::read(path).unwrap();
    let u32le = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
    assert_eq!(u32le(0), 0xa1b2_3c4d, "{}: magic", path.display());
    assert_eq!(
        (&b[4..6], &b[6..8]),
        (&2u16.to_le_bytes()[..], &4u16.to_le_bytes()[..])
    );
    assert_eq!(u32le(20), 1, "link type Ethernet");
    let mut at = 24;
    let mut out = Vec::new();
    while at < b.len() {
        let (secs, ns, incl, orig) = (u32le(at), u32le(at + 4), u32le(at + 8), u32le(at + 12));
        assert!(ns < 1_000_000_000 && incl <= orig, "record header at byte {at}");
        let start = at + 16;
        out.push(Frame {
            ns: secs as u64 * 1_000_000_000 + ns as u64,
            bytes: b[start..start + incl as usize].to_vec(),
        });
        at = start + incl as usize;
    }
    assert_eq!(at, b.len(), "{}: a truncated record", path.display());
    out
}

/// What a frame is, decoded.
#[derive(Debug, Default)]
struct Decoded {
    pcp: Option<u8>,
    dscp: u8,
    ecn: u8,
    udp_dst: u16,
    /// The UDP payload.
    l4: Vec<u8>,
    /// PFC: class-enable vector and the eight timers.
    pfc: Option<(u16, [u16; 8])>,
}

fn decode(f: &Frame) -> Decoded {
    let p = SlicedPacket::from_ethernet(&f.bytes).unwrap_or_else(|e| panic!("not Ethernet: {e}"));
    let eth = match &p.link {
        Some(etherparse::LinkSlice::Ethernet2(e)) => e.clone(),
        other => panic!("expected Ethernet II, got {other:?}"),
    };
    let mut d = Decoded {
        pcp: match p.vlan() {
            Some(etherparse::VlanSlice::SingleVlan(v)) => Some(v.priority_code_point().value()),
            Some(other) => panic!("one 802.1Q tag expected, got {other:?}"),
            None => None,
        },
        ..Default::default()
    };
    if eth.ether_type() == etherparse::EtherType(0x8808) {
        // MAC control: opcode 0x0101 (PFC), class-enable vector, eight pause timers.
        let b = &f.bytes[14..];
        assert_eq!(u16::from_be_bytes([b[0], b[1]]), 0x0101, "MAC control opcode");
        let enbv = u16::from_be_bytes([b[2], b[3]]);
        let mut t = [0u16; 8];
        for (i, q) in t.iter_mut().enumerate() {
            *q = u16::from_be_bytes([b[4 + 2 * i], b[5 + 2 * i]]);
        }
        d.pfc = Some((enbv, t));
        assert_eq!(
            &f.bytes[..6],
            &[0x01, 0x80, 0xc2, 0x00, 0x00, 0x01],
            "PFC destination"
        );
        return d;
    }
    let Some(NetSlice::Ipv4(ip)) = &p.net else {
        panic!("expected IPv4: {:?}", p.net)
    };
    let h = ip.header().to_header();
    assert_eq!(
        h.header_checksum,
        h.calc_header_checksum(),
        "IPv4 header checksum"
    );
    d.dscp = h.dscp.value();
    d.ecn = h.ecn.value();
    let Some(TransportSlice::Udp(u)) = &p.transport else {
        panic!("expected UDP")
    };
    assert_eq!(u.length() as usize, 8 + u.payload().len(), "UDP length");
    assert_eq!(
        h.total_len as usize,
        h.header_len() + u.length() as usize,
        "IPv4 total length"
    );
    d.udp_dst = u.destination_port();
    d.l4 = u.payload().to_vec();
    d
}

/// BTH (IBA 9.2): opcode, destination QP, PSN.
fn bth(l4: &[u8]) -> (u8, u32, u32) {
    let qp = u32::from_be_bytes([0, l4[5], l4[6], l4[7]]);
    let psn = u32::from_be_bytes([0, l4[9], l4[10], l4[11]]);
    (l4[0], qp, psn)
}

#[test]
fn roce_captures_parse_by_the_specifications() {
    let out = run("plain-roce", ROCE, &[]);
    let port: Vec<Decoded> = read_pcap(&out.join("port-cap.pcap")).iter().map(decode).collect();
    let frames = read_pcap(&out.join("port-cap.pcap"));
    // Data toward the receiver: RDMA WRITE opcodes (IBA table 38), PCP 3, consecutive PSNs
    // per QP, 512 KB / 4096 B = 125 packets per sender, four senders.
    let mut psns: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    let mut times = Vec::new();
    let mut ecns = Vec::new();
    for (d, f) in port.iter().zip(&frames) {
        assert_eq!(d.udp_dst, 4791, "RoCEv2's UDP port");
        let (op, qp, psn) = bth(&d.l4);
        assert!([0x06, 0x07, 0x08, 0x0a].contains(&op), "opcode {op:#x}");
        assert_eq!(d.pcp, Some(3));
        psns.entry(qp).or_default().push(psn);
        times.push(f.ns);
        ecns.push(d.ecn);
    }
    assert_eq!(psns.len(), 4, "one QP per sender");
    for (qp, p) in &psns {
        assert_eq!(*p, (0..512_000 / 4096).collect::<Vec<u32>>(), "QP {qp}");
    }
    // ECT(0) on every data frame, CE once the queue has built.
    assert_eq!(ecns[0], 2);
    assert!(ecns.iter().all(|&e| e == 2 || e == 3));
    assert!(
        ecns.iter().position(|&e| e == 3).is_some_and(|i| i > 4),
        "CE after congestion"
    );
    // Back to back on the saturated port: one frame apart, (4096 + 62 + 20) B x 8 / 100 Gb/s.
    let mut gaps: Vec<u64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_unstable();
    let expected = (4096 + 62 + 20) * 8 * 10 / 1000; // ns at 100 Gb/s
    assert!(
        gaps[gaps.len() / 2].abs_diff(expected) <= 1,
        "median gap {} ns",
        gaps[gaps.len() / 2]
    );

    // At a sender: CNPs (opcode 0x81, DSCP 48, PCP 6), ACKs (opcode 0x11, AETH syndrome 0x1f,
    // IBA 9.4.1), and PFC frames for priority 3 only, XOFF 65535 quanta or XON 0.
    let sender: Vec<Decoded> = read_pcap(&out.join("sender-cap.pcap"))
        .iter()
        .map(decode)
        .collect();
    let cnps: Vec<&Decoded> = sender
        .iter()
        .filter(|d| d.pfc.is_none() && d.l4[0] == 0x81)
        .collect();
    assert!(!cnps.is_empty());
    assert!(cnps.iter().all(|d| d.dscp == 48 && d.pcp == Some(6)));
    let acks: Vec<&Decoded> = sender
        .iter()
        .filter(|d| d.pfc.is_none() && d.l4[0] == 0x11)
        .collect();
    assert!(!acks.is_empty());
    assert!(acks.iter().all(|d| d.l4[12] == 0x1f), "AETH syndrome");
    let pfc: Vec<(u16, [u16; 8])> = sender.iter().filter_map(|d| d.pfc).collect();
    assert!(
        pfc.iter()
            .all(|(enbv, t)| *enbv == 0x0008 && (t[3] == 65535 || t[3] == 0) && t[0] == 0)
    );
    assert!(
        pfc.iter().any(|p| p.1[3] == 65535) && pfc.iter().any(|p| p.1[3] == 0),
        "XOFF and XON"
    );
}

#[test]
fn uet_captures_parse_by_the_specifications() {
    let out = run("plain-uet", UET, &[]);
    for v in ["nscc", "rccc"] {
        let frames = read_pcap(&out.join(format!("port-{v}.pcap")));
        let mut types: BTreeMap<u8, usize> = BTreeMap::new();
        for f in &frames {
            let d = decode(f);
            assert_eq!(d.udp_dst, 4793, "UET's UDP port");
            // PDS prologue: type in the top 5 bits (UE 1.0 PDS 3.5.10: RUD_REQ 2, ACK_CC 8,
            // NACK 10, CONTROL 11).
            let ty = d.l4[0] >> 3;
            assert!([2, 8, 10, 11].contains(&ty), "{v}: PDS type {ty}");
            *types.entry(ty).or_default() += 1;
            if ty == 2 {
                // A full request: the 12 B PDS header, the 44 B SES header, at most an MTU.
                assert!(d.l4.len() <= 12 + 44 + 4096, "{v}: {} B", d.l4.len());
            }
        }
        assert!(
            types.get(&2).is_some_and(|&n| n >= 8 * 256_000 / 4096),
            "{v}: {types:?}"
        );
        assert!(types.contains_key(&8), "{v}: ACKs");
        if v == "rccc" {
            assert!(types.contains_key(&11), "credits");
        }
    }
}
