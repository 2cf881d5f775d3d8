//! Tests of the DCQCN reaction and notification points against the paper's and the
//! firmware documentation's formulas.

use super::*;
use CnpOutcome::{Handled, Ignored};

const LINE: BitRate = BitRate::gbps(100);
const G: u64 = 1_000_000_000;
fn us(n: u64) -> Time {
    Time::ZERO + Duration::from_us(n)
}
fn cfg(src: &str) -> DcqcnConfig {
    toml::from_str(src).unwrap()
}
fn params(src: &str) -> DcqcnParams {
    cfg(src).resolve(LINE).unwrap()
}
fn rp_at_line(p: &DcqcnParams) -> ReactionPoint {
    ReactionPoint::new(p, LINE, Time::ZERO)
}
fn assert_rate(r: BitRate, want: f64) {
    assert!((r.0 as f64 - want).abs() <= 1.0, "rate {} != {want}", r.0);
}
/// Fires the pending rate-increase timer at its due time.
fn tick(rp: &mut ReactionPoint, p: &DcqcnParams) {
    rp.on_timer(p, rp.timer_due().expect("timer running"));
}

#[test]
fn presets_resolve_to_documented_values() {
    let us_ = Duration::from_us;
    let cx = params("");
    assert_eq!(cx.preset, DcqcnPreset::Connectx);
    assert_eq!((cx.g, cx.initial_alpha), (5. / 1024., 1023. / 1024.));
    assert_eq!((cx.alpha_to_cut, cx.min_dec_factor), (0.5, 0.5));
    assert_eq!((cx.time_reset, cx.byte_reset), (us_(300), 32767));
    assert_eq!((cx.threshold, cx.min_rate.0), (1, 1_000_000));
    assert_eq!((cx.ai.0, cx.hai.0), (5_000_000, 50_000_000));
    assert_eq!((cx.alpha_timer, cx.rate_reduce_monitor), (us_(1), us_(4)));
    assert_eq!((cx.min_time_between_cnps, cx.clamp_tgt_rate), (us_(4), false));
    assert_eq!((cx.cnp_dscp, cx.cnp_prio), (48, 6));
    assert_eq!((cx.max_rate, cx.rate_on_first_cnp), (None, None));
    let paper = params("preset = \"dcqcn-paper\"");
    assert_eq!((paper.g, paper.initial_alpha), (1. / 256., 1.0));
    assert_eq!((paper.alpha_timer, paper.time_reset), (us_(55), us_(55)));
    assert_eq!((paper.threshold, paper.byte_reset), (5, 10_000_000));
    assert_eq!((paper.ai.0, paper.clamp_tgt_rate), (40_000_000, true));
    // HPCC run.py at 100G: RATE_AI = 5 * 100/25 Mb/s, RATE_HAI = 50 * 100/25 Mb/s.
    let hpcc = params("preset = \"hpcc-ns3\"");
    assert_eq!((hpcc.ai.0, hpcc.hai.0), (20_000_000, 200_000_000));
    assert_eq!((hpcc.g, hpcc.byte_reset, hpcc.min_rate.0), (1. / 256., 0, G));
    assert_eq!(hpcc.min_time_between_cnps, Duration::ZERO);
}

#[test]
fn overrides_take_effect() {
    let p = params(
        r#"preset = "hpcc-ns3"
           rpg_ai_rate = "10Mbps"
           dce_tcp_g = 1008
           rpg_gd = 10
           rpg_byte_reset = "64KiB"
           rpg_max_rate = "40Gbps""#,
    );
    assert_eq!(
        (p.ai.0, p.hai.0),
        (10_000_000, 200_000_000),
        "only overrides change"
    );
    assert_eq!((p.g, p.alpha_to_cut, p.byte_reset), (16. / 1024., 1.0, 65536));
    assert_eq!(rp_at_line(&p).rate(), BitRate::gbps(40));
}

#[test]
fn invalid_overrides_name_the_key() {
    for (src, key) in [
        ("dce_tcp_g = 1024", "dce_tcp_g"), // g = 0
        ("dce_tcp_g = 0", "dce_tcp_g"),    // g = 1
        ("dce_tcp_rtt = \"0us\"", "dce_tcp_rtt"),
        ("rpg_time_reset = \"0s\"", "rpg_time_reset"),
        ("rpg_min_rate = \"200Gbps\"", "rpg_min_rate"),
        ("rpg_max_rate = \"400Gbps\"", "rpg_max_rate"),
        ("rpg_min_dec_fac = 101", "rpg_min_dec_fac"),
        ("rpg_gd = 9", "rpg_gd"),
        ("initial_alpha_value = 0", "initial_alpha_value"),
        ("cnp_802p_prio = 8", "cnp_802p_prio"),
    ] {
        let (k, msg) = cfg(src).resolve(LINE).unwrap_err();
        assert_eq!(k, key, "{src}: {msg}");
    }
    for bad in [
        "rpg_ai_rate = \"0Mbps\"",
        "rpg_ai_rate = -5",
        "rpg_threshold = -1",
    ] {
        assert!(toml::from_str::<DcqcnConfig>(bad).is_err(), "{bad}");
    }
    assert!(toml::from_str::<DcqcnConfig>("rpg_bogus = 1").is_err());
    assert!(toml::from_str::<DcqcnConfig>("preset = \"cx9\"").is_err());
}

#[test]
fn fresh_qp_first_cnp_cuts_about_half() {
    let p = params("");
    let mut rp = rp_at_line(&p);
    assert_eq!((rp.rate(), rp.target(), rp.timer_due()), (LINE, LINE, None));
    assert_eq!(rp.alpha(us(5)), p.initial_alpha);
    assert_eq!(rp.on_cnp(&p, us(10)), Handled);
    // The first CNP sets alpha to initial_alpha_value (1023/1024) and cuts by alpha/2.
    assert_rate(rp.rate(), 100e9 * (1.0 - (1023.0 / 1024.0) / 2.0));
    assert_eq!(rp.target(), LINE, "the target keeps the pre-cut rate");
    assert_eq!(rp.timer_due(), Some(us(310)));
}

#[test]
fn second_cnp_within_monitor_period_is_ignored() {
    let p = params("");
    let (g, mut rp) = (p.g, rp_at_line(&p));
    rp.on_cnp(&p, us(10));
    let r1 = rp.rate();
    assert_eq!((rp.on_cnp(&p, us(13)), rp.rate()), (Ignored, r1));
    // Three alpha periods decayed, then the ignored CNP still counted for alpha.
    let a13 = (1.0 - g) * (p.initial_alpha * (1.0 - g).powi(3)) + g;
    assert!((rp.alpha(us(13)) - a13).abs() < 1e-12);
    assert!(
        (rp.alpha(us(14)) - a13).abs() < 1e-12,
        "a period with a CNP has no decay"
    );
    assert_eq!(rp.on_cnp(&p, us(14)), Handled);
    assert_rate(rp.rate(), r1.0 as f64 * (1.0 - ((1.0 - g) * a13 + g) / 2.0));
    assert_eq!(
        rp.target(),
        LINE,
        "no increase since the last cut: target not clamped"
    );
}

#[test]
fn the_papers_alpha_decays_from_the_start_and_the_first_cnp_updates_it() {
    // SIGCOMM 2015: alpha = 1 at the start, (1-g) alpha every T' = 55 us without a CNP, and a
    // CNP gives (1-g) alpha + g: after 10 ms of silence alpha = (1-g)^181 ~ 0.49.
    let p = params("preset = \"dcqcn-paper\"");
    let mut rp = rp_at_line(&p);
    let t_alpha = p.alpha_timer.0;
    let quiet = Time(10_000_000_000);
    let k = (quiet.0 / t_alpha) as i32;
    let want = (1.0 - p.g).powi(k);
    assert!(
        (rp.alpha(quiet) - want).abs() < 1e-12,
        "{} vs {want}",
        rp.alpha(quiet)
    );
    assert!((want - 0.49).abs() < 0.01);
    rp.on_cnp(&p, quiet);
    let after = (1.0 - p.g) * want + p.g;
    assert!((rp.alpha(quiet) - after).abs() < 1e-12);
    assert_rate(rp.rate(), 100e9 * (1.0 - after / 2.0));
    // Firmware: no alpha before the first CNP, then initial_alpha_value.
    let cx = params("");
    let mut fw = rp_at_line(&cx);
    fw.on_cnp(&cx, quiet);
    assert_eq!(fw.alpha(quiet), cx.initial_alpha);
}

#[test]
fn alpha_decays_geometrically_without_cnps() {
    for preset in ["connectx", "hpcc-ns3"] {
        let p = params(&format!("preset = \"{preset}\""));
        let mut rp = rp_at_line(&p);
        rp.on_cnp(&p, us(10));
        let period = p.alpha_timer.0;
        for k in [0u64, 1, 2, 7, 300] {
            let want = p.initial_alpha * (1.0 - p.g).powi(k as i32);
            for t in [us(10).0 + k * period, us(10).0 + k * period + period / 2] {
                assert!((rp.alpha(Time(t)) - want).abs() < 1e-12, "{preset} k={k}");
            }
        }
    }
}

#[test]
fn fast_recovery_halves_gap_then_additive_and_hyper_raise_target() {
    let p = params("preset = \"dcqcn-paper\"\nrpg_byte_reset = \"1MB\"");
    let mut rp = rp_at_line(&p);
    rp.on_cnp(&p, us(0));
    rp.on_cnp(&p, us(20)); // the paper clamps: target = the rate before this cut
    let (rt, mut rc) = (rp.target().0 as f64, rp.rate().0 as f64);
    assert!(rt < 51e9);
    for _ in 0..p.threshold {
        tick(&mut rp, &p);
        rc = rt - (rt - rc) / 2.0;
        assert_rate(rp.rate(), rc);
        assert_rate(rp.target(), rt);
    }
    // Timer count 6 > F, byte count 0: additive increase, then Rc averages with Rt.
    let mut target = rt + 40e6;
    tick(&mut rp, &p);
    assert_rate(rp.target(), target);
    assert_rate(rp.rate(), (rc + target) / 2.0);
    // Byte counts 1..=5 are additive; at 6 both counts exceed F: hyper with i = 1.
    for _ in 0..5 {
        rp.on_sent(&p, us(400), 1_000_000);
        target += 40e6;
        assert_rate(rp.target(), target);
    }
    rp.on_sent(&p, us(400), 1_000_000);
    assert_rate(rp.target(), target + 400e6);
    tick(&mut rp, &p); // t = 7, b = 6: i = 1
    assert_rate(rp.target(), target + 800e6);
    rp.on_sent(&p, us(400), 1_000_000); // t = 7, b = 7: i = 2
    assert_rate(rp.target(), target + 1600e6);
}

#[test]
fn hpcc_timer_only_stages_match_rdma_hw() {
    let p = params("preset = \"hpcc-ns3\"");
    let mut rp = rp_at_line(&p);
    rp.on_cnp(&p, us(0));
    assert_eq!(rp.rate(), BitRate::gbps(50), "initial alpha 1.0 halves the rate");
    tick(&mut rp, &p); // fast recovery to 75G
    rp.on_cnp(&p, us(301)); // clamped after a timer increase: target = 75G
    assert_eq!(rp.target(), BitRate::gbps(75));
    let rc = rp.rate();
    rp.on_sent(&p, us(301), 1 << 30);
    assert_eq!(rp.rate(), rc, "no byte counter");
    // rdma-hw.cc RateIncEventMlx: stage < F fast recovery, == F AI, > F flat HAI.
    for add in [0, 20_000_000, 200_000_000, 200_000_000] {
        let before = rp.target().0;
        tick(&mut rp, &p);
        assert_eq!(rp.target().0, before + add);
    }
}

#[test]
fn byte_counter_steps_and_timer_stops_after_full_recovery() {
    let p = params("");
    let mut rp = rp_at_line(&p);
    rp.on_cnp(&p, us(0));
    let gap = (LINE.0 - rp.rate().0) as f64;
    rp.on_sent(&p, us(1), 32766);
    assert_rate(rp.rate(), 100e9 - gap);
    rp.on_sent(&p, us(1), 1 + 2 * 32767); // three byte-counter steps, each halves the gap
    assert_rate(rp.rate(), 100e9 - gap / 8.0);
    let (mut again, before) = (rp.clone(), rp.rate());
    again.on_cnp(&p, us(5)); // increased by bytes since the cut: the target is clamped
    assert_eq!(again.target(), before);
    let mut steps = 0;
    while let Some(due) = rp.timer_due() {
        let before = (rp.rate(), rp.target());
        rp.on_timer(&p, Time(due.0 - 1)); // stale: ignored
        assert_eq!(
            (rp.rate(), rp.target(), rp.timer_due()),
            (before.0, before.1, Some(due))
        );
        rp.on_timer(&p, due);
        steps += 1;
        assert!(steps < 100);
    }
    assert_eq!((rp.rate(), rp.target(), rp.is_limited()), (LINE, LINE, false));
}

#[test]
fn rate_never_below_min_rate_nor_min_dec_fac() {
    let p = params("rpg_min_rate = \"30Gbps\"");
    let mut rp = rp_at_line(&p);
    for i in 0..20 {
        assert_eq!(rp.on_cnp(&p, us(4 * i)), Handled);
        assert!(rp.rate() >= BitRate::gbps(30));
    }
    assert_eq!(rp.rate(), BitRate::gbps(30));
    // rpg_gd = 10 would cut by alpha (~100 %); rpg_min_dec_fac = 60 keeps 60 % of the rate.
    let p = params("rpg_gd = 10\nrpg_min_dec_fac = 60");
    let mut rp = rp_at_line(&p);
    rp.on_cnp(&p, us(0));
    assert_eq!(rp.rate(), BitRate::gbps(60));
    let p = params("rpg_min_dec_fac = 100");
    let mut rp = rp_at_line(&p);
    rp.on_cnp(&p, us(0));
    assert_eq!(rp.rate(), LINE, "100 % prevents rate reductions");
}

#[test]
fn rate_to_set_on_first_cnp_replaces_the_first_cut() {
    let p = params("rate_to_set_on_first_cnp = \"20Gbps\"");
    let mut rp = rp_at_line(&p);
    rp.on_cnp(&p, us(0));
    assert_eq!((rp.rate(), rp.target()), (BitRate::gbps(20), BitRate::gbps(20)));
    rp.on_cnp(&p, us(4));
    assert!(rp.rate() < BitRate::gbps(11));
}

#[test]
fn np_sends_at_most_one_cnp_per_min_time_between_cnps() {
    let p = params("");
    let mut np = NotificationPoint::default();
    let times = [0, 1, 3, 4, 5, 7, 8, 100];
    let sent: Vec<bool> = times.iter().map(|&t| np.on_ce(&p, us(t))).collect();
    assert_eq!(sent, [true, false, false, true, false, false, true, true]);
    let p = params("preset = \"hpcc-ns3\"");
    let mut np = NotificationPoint::default();
    assert!(
        (0..6).all(|t| np.on_ce(&p, us(t / 2))),
        "HPCC: a CNP per marked packet"
    );
}
