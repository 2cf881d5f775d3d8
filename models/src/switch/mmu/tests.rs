use super::*;

fn params(lossless: u8) -> MmuParams {
    let lossless = (0..8).filter(|p| lossless & 1 << p != 0).collect();
    MmuParams {
        buffer: 1_000_000,
        cell: 100,
        slices: 1,
        pg_alpha: 1.0,
        queue_alpha: 1.0,
        pg_min: 0,
        queue_min: 0,
        lossless,
        xoff: None,
        xon_offset: 0,
        shared_pool: None,
        headroom_pool: None,
        credit_flow: PrioMask::EMPTY,
    }
}

#[test]
fn a_credit_flow_pg_takes_shared_cells_past_its_xoff_threshold() {
    // CBFC bounds the PG by its sender's credit, not by an XOFF threshold: with no
    // headroom, a PFC PG drops past alpha / (1 + alpha) of the pool (5000 cells: 500
    // frames of 10), a credit-flow PG keeps taking cells while the pool has them (1000).
    let pfc = params(1 << 3);
    let mut m = Mmu::new(&pfc, &[0, 0]).unwrap().fresh();
    assert_eq!(fill(&mut m, 0, 1, 3).len(), 500);
    let cbfc = MmuParams {
        credit_flow: PrioMask::of(3),
        ..params(1 << 3)
    };
    let mut m = Mmu::new(&cbfc, &[0, 0]).unwrap().fresh();
    assert_eq!(fill(&mut m, 0, 1, 3).len(), 1000);
}

#[test]
fn a_credited_pg_beside_a_paused_one_reserves_no_headroom_and_never_pauses() {
    // Lossless 2 (CBFC) and 3 (PFC), 10,000 B (100 cells) of headroom per port, 2 ports:
    // only PG 3 reserves it, so the pool is 10,000 - 2 x 100 = 9,800 cells (9,600 if both
    // paused). PG 3 takes shared cells up to alpha = 1's threshold (half the free pool:
    // 4,900 cells, 490 frames of 10), then its 100 cells of headroom (10 frames), and wants
    // XOFF; PG 2 takes the whole pool (980 frames), never headroom, never XOFF.
    let mixed = MmuParams {
        credit_flow: PrioMask::of(2),
        ..params(1 << 2 | 1 << 3)
    };
    let m = Mmu::new(&mixed, &[10_000, 10_000]).unwrap().fresh();
    assert_eq!(m.shared_pool_bytes(), 980_000);
    let mut pfc = m.clone();
    let charges = fill(&mut pfc, 0, 1, 3);
    assert_eq!(charges.len(), 500);
    assert_eq!(charges.iter().filter(|&&c| c == Charge::Headroom).count(), 10);
    assert!(pfc.wants_xoff(0, 3));
    let mut cbfc = m;
    let charges = fill(&mut cbfc, 0, 1, 2);
    assert_eq!(charges.len(), 980);
    assert!(charges.iter().all(|&c| c == Charge::Shared));
    assert!(!cbfc.wants_xoff(0, 2));
}

#[test]
fn one_congested_lossy_queue_takes_alpha_over_one_plus_alpha() {
    // alpha = 1, S = 1: the queue settles at B / 2.
    let mut m = Mmu::new(&params(0), &[0, 0]).unwrap().fresh();
    let mut admitted = 0;
    while m.admit(0, 1, 0, 1000).is_ok() {
        admitted += 1;
    }
    assert_eq!(admitted * 10, 10_000 / 2, "cells held = alpha B / (1 + alpha)");
}

#[test]
fn lossless_pg_spills_into_headroom_then_drops() {
    let mut m = Mmu::new(&params(1 << 3), &[5_000, 0]).unwrap().fresh();
    let mut charges = Vec::new();
    loop {
        match m.admit(0, 1, 3, 1000) {
            Ok(c) => charges.push(c),
            Err(r) => {
                assert_eq!(r, DropReason::HeadroomExceeded);
                break;
            }
        }
    }
    assert!(m.wants_xoff(0, 3));
    assert_eq!(
        charges.iter().filter(|&&c| c == Charge::Headroom).count(),
        5,
        "5000 B of headroom"
    );
    // Drain: XON once the headroom is empty and shared use is under the threshold.
    for c in charges.iter().rev() {
        m.release(0, 1, 3, 1000, *c);
    }
    assert!(m.allows_xon(0, 3) && !m.wants_xoff(0, 3) && m.is_empty());
}

/// Fill lossless PG `prio` of port `inp` (toward port `out`) with 1000 B frames until one
/// is refused: the charges.
fn fill(m: &mut Mmu, inp: usize, out: usize, prio: u8) -> Vec<Charge> {
    let mut charges = Vec::new();
    while let Ok(c) = m.admit(inp, out, prio, 1000) {
        charges.push(c);
    }
    charges
}

#[test]
fn a_shared_pool_given_as_sonic_gives_it_is_not_carved_again() {
    // SONiC's BUFFER_POOL size is the shared pool, headroom outside it: with 5000 B of
    // headroom per port, a 500,000 B pool is 5000 cells, and one congested PG at alpha 1
    // pauses at alpha B / (1 + alpha) = 2500 cells (250 frames), whatever the headroom.
    let p = MmuParams {
        shared_pool: Some(500_000),
        ..params(1 << 3)
    };
    let mut m = Mmu::new(&p, &[5_000, 5_000]).unwrap().fresh();
    assert_eq!(m.shared_pool_bytes(), 500_000);
    let c = fill(&mut m, 0, 1, 3);
    assert_eq!(c.iter().filter(|&&c| c == Charge::Shared).count(), 250);
    // Without it, the pool is the buffer less both ports' headroom for priority 3.
    let m = Mmu::new(&params(1 << 3), &[5_000, 5_000]).unwrap().fresh();
    assert_eq!(m.shared_pool_bytes(), 1_000_000 - 2 * 5_000);
}

#[test]
fn a_shared_headroom_pool_is_shared_up_to_its_size() {
    // Two ports of 5000 B headroom each over a 6000 B headroom pool (over-subscribed
    // 10:6): the first congested PG takes all of its 5000 B, the second the 1000 B left,
    // then drops; as the first drains, the pool is free again.
    let p = MmuParams {
        headroom_pool: Some(6_000),
        ..params(1 << 3)
    };
    let mut m = Mmu::new(&p, &[5_000, 5_000, 0]).unwrap().fresh();
    let headroom = |c: &[Charge]| c.iter().filter(|&&c| c == Charge::Headroom).count();
    let first = fill(&mut m, 0, 2, 3);
    assert_eq!(headroom(&first), 5);
    let second = fill(&mut m, 1, 2, 3);
    assert_eq!(headroom(&second), 1, "the pool's last 1000 B");
    assert_eq!(m.admit(1, 2, 3, 1000), Err(DropReason::HeadroomExceeded));
    for c in first.iter().rev() {
        m.release(0, 2, 3, 1000, *c);
    }
    assert!(
        m.admit(1, 2, 3, 1000).is_ok(),
        "the first PG's headroom is back in the pool"
    );
    // The pool, not each PG's headroom, is what the shared part is short of.
    let m = Mmu::new(&p, &[5_000, 5_000, 0]).unwrap().fresh();
    assert_eq!(m.shared_pool_bytes(), 1_000_000 - 6_000);
}

#[test]
fn headroom_larger_than_the_buffer_is_refused() {
    assert!(
        Mmu::new(&params(0xff), &[200_000; 4])
            .unwrap_err()
            .contains("cannot hold")
    );
}
