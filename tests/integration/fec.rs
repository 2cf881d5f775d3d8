//! Cables that make errors: RS-FEC's latency per hop, frames lost as the FEC leaves them, and
//! ends whose FEC modes differ (models/src/fec.rs; IEEE 802.3 clauses 91, 108, 119).

use crate::common::*;

fn dac(link: &str, size: &str) -> String {
    format!(
        "[topology]\nkind = \"back-to-back\"\nlink = {link}\n[nic]\nmtu = \"4096B\"\n\
         [[flow]]\nsrc = \"h0\"\ndst = \"h1\"\nsize = \"{size}\"\n"
    )
}

fn fct(toml: &str) -> f64 {
    run(toml)[0].flows[0].fct_ns.unwrap()
}

#[test]
fn rs_fec_adds_its_codewords_time_at_every_hop() {
    // 5,120 MAC bits per codeword: 204.8 ns at 25G, 51.2 at 100G; at 400G clause 119
    // interleaves two codewords, 25.6 ns.
    for (rate, fec, per_hop) in [
        ("25Gbps", "rs-528", 204.8),
        ("100Gbps", "rs-528", 51.2),
        ("400Gbps", "rs-544", 25.6),
    ] {
        let plain = format!("{{ rate = \"{rate}\", cable = \"3m\" }}");
        let coded = format!("{{ rate = \"{rate}\", cable = \"3m\", fec = \"{fec}\" }}");
        let added = fct(&dac(&coded, "10KB")) - fct(&dac(&plain, "10KB"));
        assert_close(added, per_hop, 0.001, 0.0, &format!("{rate} {fec}, one hop (ns)"));
        // Through a switch: two hops.
        let star = |l: &str| {
            format!(
                "[topology]\nkind = \"star\"\nhosts = 2\nhost_link = {l}\n\
                 [[flow]]\nsrc = \"h0\"\ndst = \"h1\"\nsize = \"10KB\"\n"
            )
        };
        let added = fct(&star(&coded)) - fct(&star(&plain));
        assert_close(
            added,
            2.0 * per_hop,
            0.001,
            0.0,
            &format!("{rate} {fec}, two hops (ns)"),
        );
    }
    // A given decoder latency replaces the bound.
    let given = "{ rate = \"100Gbps\", cable = \"3m\", fec = \"rs-544\", fec_latency = \"120ns\" }";
    let plain = "{ rate = \"100Gbps\", cable = \"3m\" }";
    let added = fct(&dac(given, "10KB")) - fct(&dac(plain, "10KB"));
    assert_close(added, 120.0, 0.001, 0.0, "fec_latency (ns)");
}

#[test]
fn frames_are_lost_as_often_as_the_code_leaves_them() {
    // RS(528,514) at a pre-FEC bit error rate of 5e-4: a 10-bit symbol is wrong with
    // p = 1-(1-b)^10 and a codeword fails past 7 wrong symbols of 528 (the binomial tail,
    // computed here on its own); a frame of L bits overlaps floor(L/5120)+1 codewords, or one
    // more with probability frac(L/5120).
    let b: f64 = 5e-4;
    let p = 1.0 - (1.0 - b).powi(10);
    let mut tail = 0.0;
    let mut choose = 1.0f64; // C(528, i)
    for i in 0..=528u32 {
        if i > 0 {
            choose *= (528 - i + 1) as f64 / i as f64;
        }
        if i > 7 {
            tail += choose * p.powi(i as i32) * (1.0 - p).powi(528 - i as i32);
        }
    }
    let link = "{ rate = \"100Gbps\", cable = \"3m\", fec = \"rs-528\", pre_fec_ber = 5e-4 }";
    let r = &run(&dac(link, "40MB"))[0];
    assert!(r.flows[0].fct_ns.is_some(), "the flow recovers and finishes");
    let frames = counter(r, "h0", "to-h1", "tx_packets") as f64;
    let frame_bytes = counter(r, "h0", "to-h1", "tx_bytes") as f64 / frames;
    let x = frame_bytes * 8.0 / 5120.0;
    let ok = |m: f64| (1.0 - tail).powf(m);
    let per_frame = 1.0 - ((1.0 - x.fract()) * ok(x.floor() + 1.0) + x.fract() * ok(x.floor() + 2.0));
    let want = frames * per_frame;
    let lost = counter(r, "h1", "to-h0", "drop_link_error") as f64;
    eprintln!(
        "{frames} frames of {frame_bytes:.0} B, codeword failure {tail:.3e}: {lost} lost, {want:.1} expected"
    );
    assert!(want > 50.0, "the case must lose frames to test anything ({want})");
    assert!(
        (lost - want).abs() < 4.0 * (want * (1.0 - per_frame)).sqrt(),
        "{lost} frames lost, {want:.1} expected"
    );
    // The same bit errors without FEC lose nearly every frame: 1-(1-b)^L.
    let raw = 1.0 - (1.0 - b).powf(frame_bytes * 8.0);
    assert!(
        raw > 0.99 && per_frame < 0.1,
        "{raw} without FEC, {per_frame} with it"
    );
}

/// Two leaves, two spines; leaf0's cable to spine1 with `fec` as given.
fn two_spines(fec: &str) -> String {
    format!(
        r#"
        [topology]
        kind = "graph"
        nodes = [
          {{ name = "spine0", kind = "switch" }}, {{ name = "spine1", kind = "switch" }},
          {{ name = "leaf0", kind = "switch" }}, {{ name = "leaf1", kind = "switch" }},
          {{ name = "a", kind = "host" }}, {{ name = "b", kind = "host" }},
        ]
        links = [
          {{ a = "a", b = "leaf0", rate = "100Gbps", cable = "3m" }},
          {{ a = "b", b = "leaf1", rate = "100Gbps", cable = "3m" }},
          {{ a = "leaf0", b = "spine0", rate = "100Gbps", cable = "10m" }},
          {{ a = "leaf0", b = "spine1", rate = "100Gbps", cable = "10m", fec = {fec} }},
          {{ a = "leaf1", b = "spine0", rate = "100Gbps", cable = "10m" }},
          {{ a = "leaf1", b = "spine1", rate = "100Gbps", cable = "10m" }},
        ]
        [nic]
        lb = {{ kind = "reps" }}
        transport = "uet"
        [[flow]]
        src = "a"
        dst = "b"
        size = "2MB"
        "#
    )
}

#[test]
fn a_cable_whose_ends_run_different_fec_never_comes_up() {
    // Sprayed over both spines when the cable works.
    let r = &run(&two_spines("\"rs-544\""))[0];
    assert!(counter(r, "leaf0", "to-spine1", "tx_packets") > 100);
    assert!(r.summary.config_findings.is_empty());
    // One end without FEC: the cable is down from the start, routing never uses it, the
    // flow takes spine0 alone, and the check names the key.
    let r = &run(&two_spines("[\"rs-544\", \"none\"]"))[0];
    assert!(r.flows[0].fct_ns.is_some());
    assert_eq!(counter(r, "leaf0", "to-spine1", "tx_packets"), 0);
    let f = &r.summary.config_findings;
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(
        (f[0].id, f[0].key.as_str()),
        ("fec-mismatch", "topology.links[3].fec")
    );
    assert!(
        f[0].problem.contains("rs-544") && f[0].fix.contains("fec = \"rs-544\""),
        "{f:#?}"
    );
    // A host's only cable: its flows cannot start, and say why.
    let link = "{ rate = \"100Gbps\", cable = \"3m\", fec = [\"none\", \"rs-528\"] }";
    let r = &run(&dac(link, "1MB"))[0];
    let status = r.flows[0].status.to_string();
    assert!(status.contains("sender's cable is down"), "{status}");
}

#[test]
fn fec_settings_that_cannot_be_meant_are_refused() {
    for (link, key) in [
        (
            "{ rate = \"100Gbps\", cable = \"3m\", ber = 1e-9, pre_fec_ber = 1e-5, fec = \"rs-528\" }",
            "pre_fec_ber",
        ),
        (
            "{ rate = \"100Gbps\", cable = \"3m\", fec_latency = \"100ns\" }",
            "fec_latency",
        ),
        (
            "{ rate = \"100Gbps\", cable = \"3m\", pre_fec_ber = 0.5 }",
            "pre_fec_ber",
        ),
        ("{ rate = \"100Gbps\", cable = \"3m\", fec = \"rs-999\" }", "fec"),
    ] {
        let e = models::scenario::parse(&dac(link, "1MB"), "t.toml", "t", &Default::default()).unwrap_err();
        assert!(e.to_string().contains(key), "{link}: {e}");
    }
}

#[test]
fn fec_counters_count_every_codeword_of_the_time_the_cable_was_up_as_the_code_says() {
    // RS(528,514), t = 7, at 4e-4 before FEC: a symbol (10 bits) is wrong with
    // p = 1-(1-4e-4)^10, a codeword's wrong symbols are Binomial(528, p). The receiver sees
    // 100e9 / 5,120 codewords a second while its cable is up, idle or not (802.3 clause 91
    // sends them continuously); the cable is down from 100 us to 300 us of a run the flow
    // keeps going well past that.
    let toml = dac(
        r#"{ rate = "100Gbps", cable = "3m", fec = "rs-528", pre_fec_ber = 4e-4 }"#,
        "4MB",
    ) + "[[fault]]\nlink = [\"h0\", \"h1\"]\nkind = \"down\"\nat = \"100us\"\nuntil = \"300us\"\n";
    let r = run(&toml).remove(0);
    let (n, t) = (528u64, 7u64);
    let p = 1.0 - (1.0f64 - 4e-4).powi(10);
    let pmf = |k: u64| {
        let ln_c: f64 = (1..=k).map(|i| ((n - i + 1) as f64 / i as f64).ln()).sum();
        (ln_c + k as f64 * p.ln() + (n - k) as f64 * (1.0 - p).ln()).exp()
    };
    let corrected_p: f64 = (1..=t).map(pmf).sum();
    let failed_p = 1.0 - pmf(0) - corrected_p;
    let mean_symbols = (1..=t).map(|k| k as f64 * pmf(k)).sum::<f64>() / corrected_p;
    let up_s = (r.summary.simulated_ns - 200_000.0) * 1e-9;
    let codewords = up_s * 100e9 / 5120.0;
    // The data direction, at h1.
    let c = |name: &str| counter(&r, "h1", "to-h0", name) as f64;
    let (corr, uncorr, sym) = (
        c("fec_corrected_codewords"),
        c("fec_uncorrectable_codewords"),
        c("fec_symbol_errors"),
    );
    // Each within five standard deviations of its binomial count.
    let within = |got: f64, p: f64, what: &str| {
        let (mean, sd) = (codewords * p, (codewords * p * (1.0 - p)).sqrt());
        assert!(
            (got - mean).abs() < 5.0 * sd + 1.0,
            "{what}: {got} against {mean:.0} +- {sd:.0}"
        );
    };
    within(corr, corrected_p, "corrected codewords");
    within(uncorr, failed_p, "uncorrectable codewords");
    assert_close(
        sym / corr,
        mean_symbols,
        1e-3,
        0.0,
        "symbols per corrected codeword",
    );
    // Every frame the FEC lost had an uncorrectable codeword under it.
    assert!(
        uncorr >= c("drop_link_error"),
        "{uncorr} < {}",
        c("drop_link_error")
    );
    assert!(c("drop_link_error") > 0.0, "frames were lost");
    // The same counters as SONiC prints them; none on a cable without FEC.
    let plain = run(&dac(
        r#"{ rate = "100Gbps", cable = "3m", pre_fec_ber = 1e-9 }"#,
        "10KB",
    ))
    .remove(0);
    assert!(plain.counters.iter().all(|c| !c.counter.starts_with("fec_")));
}

#[test]
fn sonic_shows_a_switch_ports_fec_counters_as_fec_stats_does() {
    let toml = r#"
        [topology]
        kind = "star"
        hosts = 2
        host_link = { rate = "100Gbps", cable = "3m", fec = "rs-544", pre_fec_ber = 2e-4 }
        [switch]
        sonic_counters = true
        [[flow]]
        src = "h0"
        dst = "h1"
        size = "1MB"
        "#;
    let r = run(toml).remove(0);
    let row = |counter: &str| {
        r.sonic
            .iter()
            .find(|s| {
                s.command == "show interfaces counters fec-stats"
                    && &*s.port == "to-h0"
                    && s.counter == counter
            })
            .map(|s| s.value.parse::<u64>().unwrap())
    };
    let corr = counter(&r, "sw0", "to-h0", "fec_corrected_codewords");
    assert!(corr > 0);
    assert_eq!(row("FEC_CORR"), Some(corr));
    assert_eq!(
        row("FEC_UNCORR"),
        Some(counter(&r, "sw0", "to-h0", "fec_uncorrectable_codewords"))
    );
    assert_eq!(
        row("FEC_SYMBOL_ERR"),
        Some(counter(&r, "sw0", "to-h0", "fec_symbol_errors"))
    );
}
