//! One switch alone: frames handed to [`Switch::receive`] on a four-host star, with expected
//! values from the configured sizes (cells, thresholds, headroom).

use super::*;
use crate::asic;
use crate::ids::FlowId;
use crate::network::Network;
use crate::packet::{Charge, UET_DATA_HEADERS, flags, roce_data_frame, uet_data_frame};
use crate::pfc::PfcConfig;
use crate::routing::Routing;
use crate::topology::Topology;
use ecn::EcnConfig;
use sim_core::{Bytes, RngStreams};
use trim::TrimConfig;

const MTU: u32 = 1024;

struct Bench {
    sw: Switch,
    net: Network,
    cfg: SwitchConfig,
    now: Time,
}

/// A star of four hosts (h0..h3 on sw0), the switch configured by `cfg` and `pfc`.
fn bench(cfg: SwitchConfig, pfc: PfcConfig) -> Bench {
    let topo = Topology::test_star(4);
    let net = Network::build(&topo, Routing::Ecmp, &RngStreams::new(1));
    let layout = build_buffers(&topo, |_| (&cfg, &pfc), roce_data_frame(MTU)).unwrap();
    let node = net.switch_node[0];
    let edge = net
        .ports_of(node)
        .map(
            |p| match net.roles[net.port_node[net.peer[p.idx()].idx()].idx()] {
                crate::network::Role::Host(h) => h,
                crate::network::Role::Switch(_) => HostId::NONE,
            },
        )
        .collect();
    let first = PortId(net.node_ports[node.idx()].start);
    Bench {
        sw: Switch::new(
            SwitchId(0),
            node,
            first,
            &layout[0],
            edge,
            RngStreams::new(1).stream("wred", 0),
        ),
        net,
        cfg,
        now: Time::ZERO,
    }
}

/// One switch of a four-host star with the default configuration (for the tests of other
/// files of this folder).
pub(super) fn one_switch() -> Switch {
    bench(SwitchConfig::default(), PfcConfig::default()).sw
}

impl Bench {
    /// The switch's port cabled to host `h`.
    fn port_to(&self, h: u32) -> PortId {
        self.net
            .port_between(self.sw.node, self.net.host_node[h as usize], 0)
            .unwrap()
    }

    fn receive(&mut self, from: u32, pkt: &mut Packet) -> Arrival {
        let range = self.net.node_ports[self.sw.node.idx()].clone();
        let in_port = self.port_to(from);
        self.sw.receive(
            &self.cfg,
            self.now,
            in_port,
            pkt,
            &mut self.net.ports[range.start as usize..range.end as usize],
            &mut self.net.pool,
            &mut self.net.router,
        )
    }

    fn ports(&self) -> &[crate::port::Port] {
        let r = self.net.node_ports[self.sw.node.idx()].clone();
        &self.net.ports[r.start as usize..r.end as usize]
    }
}

/// A RoCEv2 data frame of `payload` bytes to `dst` at `prio`, ECN-capable.
fn roce(dst: u32, prio: u8, payload: u32) -> Packet {
    let frame = roce_data_frame(payload) as u16;
    Packet::data(
        FlowId(dst),
        HostId(dst),
        0,
        payload as u16,
        frame,
        0xc000,
        prio,
        flags::ECT,
        Time::ZERO,
    )
}

/// A trimmable UET data frame of a full MTU to `dst`.
fn uet(dst: u32) -> Packet {
    let frame = uet_data_frame(MTU) as u16;
    let fl = flags::ECT | flags::TRIMMABLE;
    Packet::data(
        FlowId(dst),
        HostId(dst),
        0,
        MTU as u16,
        frame,
        0xc000,
        3,
        fl,
        Time::ZERO,
    )
}

fn small_buffer(bytes: u64) -> SwitchConfig {
    SwitchConfig {
        buffer: Some(Bytes(bytes)),
        ..SwitchConfig::default()
    }
}

#[test]
fn a_frame_is_routed_to_its_destination_admitted_and_queued() {
    let mut b = bench(SwitchConfig::default(), PfcConfig::default());
    let mut p = roce(2, 0, MTU);
    let a = b.receive(1, &mut p);
    let out = b.port_to(2);
    assert_eq!(
        a,
        Arrival {
            verdict: Verdict::Queued {
                out,
                xoff: false,
                marked: false
            },
            trimmed: None,
            tail_trimmed: None,
        }
    );
    assert_eq!(p.in_port, b.port_to(1));
    assert_ne!(p.charge, Charge::None);
    assert_eq!(b.net.ports[out.idx()].queued_bytes(0), p.frame as u64);
}

#[test]
fn a_destination_without_a_working_cable_is_no_route() {
    let mut b = bench(SwitchConfig::default(), PfcConfig::default());
    let to2 = b.port_to(2);
    let back = b.net.peer[to2.idx()];
    (b.net.port_up[to2.idx()], b.net.port_up[back.idx()]) = (false, false);
    b.net.reroute();
    let a = b.receive(1, &mut roce(2, 0, MTU));
    let verdict = Verdict::Dropped {
        reason: DropReason::NoRoute,
        at: b.port_to(1),
        adequate: false,
    };
    assert_eq!(a.verdict, verdict);
}

#[test]
fn one_congested_lossy_queue_fills_alpha_over_one_plus_alpha_of_the_buffer_then_drops() {
    // Trident 3: 256 B cells, lossy alpha 2^3. One queue is admitted while its cells are under
    // alpha x (free cells): it stops at alpha S / (1 + alpha) of the S shared cells.
    let buffer = 100_000u64;
    let mut b = bench(small_buffer(buffer), PfcConfig::default());
    let (cell, alpha) = (256u64, 8.0);
    let shared = buffer.div_ceil(cell) as f64;
    let frame = roce_data_frame(MTU) as u64;
    let per_frame = frame.div_ceil(cell) as f64;
    let expected = (alpha * shared / (1.0 + alpha) / per_frame).ceil() as usize;
    let out = b.port_to(0);
    let mut admitted = 0;
    let verdict = loop {
        let a = b.receive(1, &mut roce(0, 0, MTU));
        match a.verdict {
            Verdict::Queued { .. } => admitted += 1,
            v => break v,
        }
    };
    assert_eq!(admitted, expected);
    let reason = DropReason::LossyBufferFull;
    let drop = Verdict::Dropped {
        reason,
        at: out,
        adequate: false,
    };
    assert_eq!(verdict, drop);
    assert_eq!(b.net.ports[out.idx()].counters.drops_lossy, 1);
}

#[test]
fn a_trimmable_frame_over_the_trim_threshold_keeps_its_headers_at_the_trim_priority() {
    let cfg = SwitchConfig {
        trim: Some(TrimConfig {
            threshold: Some(Bytes(1)),
            size: None,
            priority: 7,
            tail: 0.0,
        }),
        ..SwitchConfig::default()
    };
    let mut b = bench(cfg, PfcConfig::default());
    let out = b.port_to(0);
    let whole = b.receive(1, &mut uet(0));
    assert_eq!(whole.trimmed, None, "an empty queue takes it whole");
    let mut p = uet(0);
    let a = b.receive(2, &mut p);
    let cut = uet_data_frame(MTU) - UET_DATA_HEADERS;
    assert_eq!(a.trimmed, Some((out, cut)));
    assert!(matches!(a.verdict, Verdict::Queued { out: o, .. } if o == out));
    assert_eq!((p.frame as u32, p.payload, p.prio), (UET_DATA_HEADERS, 0, 7));
    assert!(
        p.has(flags::TRIMMED) && p.has(flags::LAST_HOP),
        "h0 is cabled to this egress"
    );
    assert_eq!(b.net.ports[out.idx()].queued_bytes(7), UET_DATA_HEADERS as u64);
    assert_eq!(b.net.ports[out.idx()].counters.trimmed, 1);
    let mut roce_frame = roce(0, 3, MTU);
    assert_eq!(
        b.receive(2, &mut roce_frame).trimmed,
        None,
        "RoCEv2 frames are never trimmed"
    );
}

#[test]
fn over_the_threshold_a_tail_share_of_one_cuts_the_queued_tail_and_admits_the_arrival_whole() {
    // NDP's and uet-htsim's CompositeQueue rule, at probability 1: the packet that waited
    // last is cut to its headers and moves to the trim priority; the arrival takes its place.
    let cfg = SwitchConfig {
        trim: Some(TrimConfig {
            threshold: Some(Bytes(1)),
            size: None,
            priority: 7,
            tail: 1.0,
        }),
        ..SwitchConfig::default()
    };
    let mut b = bench(cfg, PfcConfig::default());
    let out = b.port_to(0);
    let mut first = uet(0);
    first.flow = FlowId(11);
    assert_eq!(
        b.receive(1, &mut first).tail_trimmed,
        None,
        "an empty queue takes it whole"
    );
    let mut second = uet(0);
    second.flow = FlowId(12);
    let a = b.receive(2, &mut second);
    let cut = uet_data_frame(MTU) - UET_DATA_HEADERS;
    assert_eq!(a.trimmed, None, "the arrival is admitted whole");
    let (at, head, bytes) = a.tail_trimmed.expect("the tail was cut");
    assert_eq!((at, head.flow, bytes), (out, FlowId(11), cut));
    assert_eq!(
        (head.frame as u32, head.payload, head.prio),
        (UET_DATA_HEADERS, 0, 7)
    );
    assert!(head.has(flags::TRIMMED) && head.has(flags::LAST_HOP));
    let port = &b.net.ports[out.idx()];
    assert_eq!(
        port.queued_bytes(3),
        uet_data_frame(MTU) as u64,
        "only the arrival waits whole"
    );
    assert_eq!(port.queued_bytes(7), UET_DATA_HEADERS as u64);
    assert_eq!(port.counters.trimmed, 1);
    // What the buffer holds is what waits: the tail's cells went back when it was cut.
    let (ol, mmu) = (local(&b, 0), &b.sw.mmu);
    let cell = mmu.queue_bytes(ol, 7) / mmu.cells(UET_DATA_HEADERS as u16) as u64;
    assert_eq!(
        mmu.queue_bytes(ol, 3),
        mmu.cells(uet_data_frame(MTU) as u16) as u64 * cell,
        "one full frame's cells at priority 3"
    );
}

#[test]
fn wred_marks_ect_frames_over_kmax_on_enqueue_or_dequeue() {
    let ecn = |mark_at| EcnConfig {
        kmin: Bytes(0),
        kmax: Bytes(1),
        pmax: 1.0,
        mark_at,
    };
    let cfg = SwitchConfig {
        ecn: Some(ecn(MarkAt::Enqueue)),
        ..SwitchConfig::default()
    };
    let mut b = bench(cfg, PfcConfig::default());
    let out = b.port_to(0);
    let first = b.receive(1, &mut roce(0, 0, MTU));
    assert!(
        matches!(first.verdict, Verdict::Queued { marked: false, .. }),
        "empty queue: below kmin"
    );
    let mut second = roce(0, 0, MTU);
    let a = b.receive(2, &mut second);
    assert!(matches!(a.verdict, Verdict::Queued { marked: true, .. }));
    assert!(second.has(flags::CE));
    assert_eq!(b.net.ports[out.idx()].counters.ecn_marked, 1);

    let cfg = SwitchConfig {
        ecn: Some(ecn(MarkAt::Dequeue)),
        ..SwitchConfig::default()
    };
    let mut b = bench(cfg, PfcConfig::default());
    b.receive(1, &mut roce(0, 0, MTU));
    b.receive(2, &mut roce(0, 0, MTU));
    let port = &mut b.net.ports[out.idx()];
    let mut head = port.dequeue(&mut b.net.pool, Time::ZERO).unwrap();
    assert!(
        b.sw.dequeued(&b.cfg, port, &mut head),
        "one frame still queued behind it"
    );
    let mut last = port.dequeue(&mut b.net.pool, Time::ZERO).unwrap();
    assert!(!b.sw.dequeued(&b.cfg, port, &mut last), "the queue is empty now");
    assert_eq!(port.counters.ecn_marked, 1);
}

#[test]
fn every_asic_marks_a_burst_as_sonics_dequeue_ecn_test_expects() {
    // sonic-mgmt's test_dequeue_ecn (tests/snappi_tests/ecn/test_dequeue_ecn_with_snappi.py),
    // run on every SONiC platform: WRED-ECN at kmin 50000, kmax 51000 B, 100 %; 101 frames of
    // 1024 B held in one egress queue, then released: the first to leave is marked, the last
    // is not (marking at enqueue would do the opposite).
    use crate::asic::Asic;
    for asic in [
        Asic::Trident3,
        Asic::Tomahawk,
        Asic::Tomahawk4,
        Asic::Tomahawk5,
        Asic::Spectrum,
        Asic::Spectrum2,
        Asic::Spectrum3,
        Asic::Spectrum4,
        Asic::Campus,
    ] {
        let ecn: EcnConfig = toml::from_str("kmin = \"50000B\"\nkmax = \"51000B\"\npmax = 1.0").unwrap();
        let cfg = SwitchConfig {
            asic,
            ecn: Some(ecn),
            ..SwitchConfig::default()
        };
        let mut b = bench(cfg, PfcConfig::default());
        let out = b.port_to(0);
        for _ in 0..101 {
            let a = b.receive(1, &mut roce(0, 0, 1024));
            assert!(matches!(a.verdict, Verdict::Queued { .. }), "{asic:?}");
        }
        let port = &mut b.net.ports[out.idx()];
        let mut marks = Vec::new();
        while let Some(mut pkt) = port.dequeue(&mut b.net.pool, Time::ZERO) {
            marks.push(b.sw.dequeued(&b.cfg, port, &mut pkt) || pkt.has(flags::CE));
        }
        assert_eq!(marks.len(), 101);
        assert!(
            marks[0] && !marks[100],
            "{asic:?}: the first marked, the last not"
        );
    }
}

#[test]
fn a_lossless_pg_asks_for_xoff_at_its_threshold_spills_into_headroom_then_drops() {
    // Static XOFF X on the PG's shared cells, headroom H: ceil(X / c) frames go to the shared
    // pool, the one that reaches X asks for XOFF, floor(H / c) more fit the headroom, and the
    // next is dropped at the ingress, headroom exceeded (H is set below what the cable needs).
    let (x, h) = (10_000u64, 8_192u64);
    let pfc = PfcConfig {
        priorities: vec![3],
        xoff: Some(Bytes(x)),
        headroom: Some(Bytes(h)),
        ..PfcConfig::default()
    };
    let mut b = bench(SwitchConfig::default(), pfc);
    let cell = 256u64;
    let c = (roce_data_frame(MTU) as u64).div_ceil(cell);
    let (to_shared, to_headroom) = (x.div_ceil(cell).div_ceil(c), h.div_ceil(cell) / c);
    let in_port = b.port_to(1);
    let mut verdicts = Vec::new();
    loop {
        let a = b.receive(1, &mut roce(0, 3, MTU));
        if let Verdict::Queued { xoff: true, .. } = a.verdict {
            b.net.ports[in_port.idx()].xoff.enter(b.now, 3);
            b.sw.note_xoff();
        }
        let dropped = matches!(a.verdict, Verdict::Dropped { .. });
        verdicts.push(a.verdict);
        if dropped {
            break;
        }
    }
    let xoff_at = verdicts
        .iter()
        .position(|v| matches!(v, Verdict::Queued { xoff: true, .. }));
    assert_eq!(xoff_at, Some(to_shared as usize - 1), "the frame that reaches X");
    assert_eq!(verdicts.len() as u64, to_shared + to_headroom + 1);
    let reason = DropReason::HeadroomExceeded;
    let drop = Verdict::Dropped {
        reason,
        at: in_port,
        adequate: false,
    };
    assert_eq!(verdicts.last(), Some(&drop));
    assert_eq!(b.net.ports[in_port.idx()].counters.drops_headroom, 1);
}

#[test]
fn a_paused_pg_resumes_when_its_occupancy_falls_below_xon_whatever_order_its_frames_leave_in() {
    // Static XOFF X, XON offset O: n frames of c cells each, the first ceil(X/c) in the shared
    // pool, the rest in headroom. Departing cells leave the PG's headroom first, then its
    // shared use, so XON comes at the first departure k with k c >= headroom cells and
    // shared cells - (k c - headroom cells) <= X - O, although the frames charged to the
    // headroom are the last in the egress queue.
    let (x, offset) = (10_000u64, 2_560u64);
    let pfc = PfcConfig {
        priorities: vec![3],
        xoff: Some(Bytes(x)),
        headroom: Some(Bytes(100_000)),
        xon_offset: Some(Bytes(offset)),
        ..PfcConfig::default()
    };
    let mut b = bench(SwitchConfig::default(), pfc);
    let (in_port, out) = (b.port_to(1), b.port_to(0));
    let cell = 256u64;
    let c = (roce_data_frame(MTU) as u64).div_ceil(cell);
    let (x_cells, o_cells) = (x.div_ceil(cell), offset.div_ceil(cell));
    let n = 12u64;
    let shared = x_cells.div_ceil(c) * c;
    let headroom = n * c - shared;
    let expected = (1..=n)
        .find(|k| k * c >= headroom && shared - (k * c - headroom) <= x_cells - o_cells)
        .unwrap();
    for _ in 0..n {
        let a = b.receive(1, &mut roce(0, 3, MTU));
        if let Verdict::Queued { xoff: true, .. } = a.verdict {
            b.net.ports[in_port.idx()].xoff.enter(b.now, 3);
            b.sw.note_xoff();
        }
    }
    let mut xon = Vec::new();
    for _ in 0..n {
        let pkt = b.net.ports[out.idx()].dequeue(&mut b.net.pool, b.now).unwrap();
        let range = b.net.node_ports[b.sw.node.idx()].clone();
        let ports = &b.net.ports[range.start as usize..range.end as usize];
        xon.push(b.sw.departed(out, &pkt, ports));
    }
    assert!(expected < n, "the test must resume before the queue drains");
    assert_eq!(xon.iter().position(|&x| x).map(|k| k as u64 + 1), Some(expected));
    assert!(b.sw.may_resume(in_port, 3) && b.sw.mmu.is_empty());
    assert_eq!(b.ports().len(), 4);
}

/// The switch's local port index of the port cabled to host `h`.
fn local(b: &Bench, h: u32) -> usize {
    b.port_to(h).idx() - b.net.node_ports[b.sw.node.idx()].start as usize
}

const NEW_GENERATION: [asic::Asic; 4] = [
    asic::Asic::Spectrum3,
    asic::Asic::Spectrum4,
    asic::Asic::Tomahawk4,
    asic::Asic::Tomahawk5,
];

#[test]
fn the_400g_generation_profiles_are_their_sources_numbers() {
    use asic::Asic;
    let p = |a: Asic| {
        let p = a.profile();
        let alphas = (p.pg_alpha_log2, p.queue_alpha_log2);
        (
            p.buffer,
            p.cell,
            p.slices,
            alphas,
            p.ports,
            p.xon_offset,
            p.headroom,
        )
    };
    // SONiC: Mellanox cells 144 B and 192 B, lossless dynamic_th 0, q_lossy_profile 3.
    assert_eq!(p(Asic::Spectrum3), (64_000_000, 144, 1, (0, 3), 128, 0, None));
    assert_eq!(p(Asic::Spectrum4), (160_000_000, 192, 1, (0, 3), 256, 0, None));
    // SDKLT: 2 ITMs x 231,446 cells x 254 B; Dell Z9664F: lossy 2, xon_offset 9144 B.
    let th4 = (2 * 231_446 * 254, 254, 2, (0, 2), 256, 9144, None);
    assert_eq!(p(Asic::Tomahawk4), th4);
    // Arista 7060X6: 2 ITMs x 329,816 cells x 254 B; lossy 0, xon_offset 3556 B.
    let th5 = (2 * 329_816 * 254, 254, 2, (0, 0), 512, 3556, None);
    assert_eq!(p(Asic::Tomahawk5), th5);
    for (name, a) in [
        ("spectrum3", Asic::Spectrum3),
        ("spectrum4", Asic::Spectrum4),
        ("tomahawk4", Asic::Tomahawk4),
        ("tomahawk5", Asic::Tomahawk5),
    ] {
        let c: SwitchConfig = toml::from_str(&format!("asic = \"{name}\"")).unwrap();
        assert_eq!(c.asic, a, "{name}");
    }
}

#[test]
fn each_slice_holds_its_share_of_the_buffer_less_the_headroom_of_its_ports() {
    // With PFC on one priority, slice s holds cells(B) / slices cells less the headroom
    // cells of the ports in it (4 / slices of the star's four), the headroom being what the
    // 100G, 10 ns cable can deliver after XOFF.
    let pfc = PfcConfig {
        priorities: vec![3],
        ..PfcConfig::default()
    };
    let link = &Topology::test_star(4).links[0];
    for a in NEW_GENERATION {
        let p = a.profile();
        let b = bench(
            SwitchConfig {
                asic: a,
                ..SwitchConfig::default()
            },
            pfc.clone(),
        );
        let cell = p.cell as u64;
        let frame = roce_data_frame(MTU);
        let headroom =
            PfcConfig::headroom_needed(link.rate, link.delay, frame, pfc.response_time(link.rate), p.cell);
        let per_slice = p.buffer.div_ceil(cell) / p.slices as u64;
        let shared = per_slice - (4 / p.slices as u64) * headroom.div_ceil(cell);
        for h in 0..4 {
            assert_eq!(b.sw.mmu.shared_bytes(local(&b, h)), shared * cell, "{a:?} h{h}");
        }
    }
}

#[test]
fn a_lossy_queue_of_each_new_profile_settles_at_its_alpha_share_of_its_slice() {
    // alpha = 2^queue_alpha_log2; the queue to h0 is admitted while its cells are under
    // alpha x free cells of its slice: ceil(alpha S / ((1 + alpha) c)) frames of c cells.
    // The other slice (h2's egress, on a two-ITM chip) is untouched.
    let buffer = 400_000u64;
    for a in NEW_GENERATION {
        let p = a.profile();
        let cfg = SwitchConfig {
            asic: a,
            buffer: Some(Bytes(buffer)),
            ..SwitchConfig::default()
        };
        let mut b = bench(cfg, PfcConfig::default());
        let cell = p.cell as u64;
        let slice = (buffer.div_ceil(cell) / p.slices as u64) as f64;
        let alpha = 2f64.powi(p.queue_alpha_log2 as i32);
        let c = (roce_data_frame(MTU) as u64).div_ceil(cell);
        let expected = (alpha * slice / (1.0 + alpha) / c as f64).ceil() as u64;
        let mut admitted = 0;
        while let Verdict::Queued { .. } = b.receive(1, &mut roce(0, 0, MTU)).verdict {
            admitted += 1;
        }
        assert_eq!(admitted, expected, "{a:?}");
        let used = admitted * c * cell;
        assert_eq!(
            b.sw.mmu.free_bytes(local(&b, 0)),
            slice as u64 * cell - used,
            "{a:?}"
        );
        if p.slices == 2 {
            assert_eq!(b.sw.mmu.free_bytes(local(&b, 2)), slice as u64 * cell, "{a:?}");
        }
    }
}
