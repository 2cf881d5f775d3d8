//! Queueing theory: one port fed by Poisson packet arrivals of one size is an M/D/1 queue,
//! whose mean wait is rho / (2 (1 - rho)) service times (Pollaczek-Khinchine).

use crate::common::*;

fn md1_mean_wait_in_service_times(rho: f64, seed: u64) -> f64 {
    let (payload, gbps, delay_ns) = (1000u64, 100.0, 15.0);
    let service_ns = tx_ns(roce_wire(payload), gbps);
    // The generator's load counts payload bytes; the queue sees wire bytes.
    let load = rho * payload as f64 / roce_wire(payload) as f64;
    // About 1.5 million arrivals.
    let duration_us = (1.5e6 * service_ns / rho / 1000.0) as u64;
    let toml = format!(
        r#"
        seed = {seed}
        [topology]
        kind = "back-to-back"
        link = {{ rate = "100Gbps", delay = "{delay_ns}ns" }}
        [[workload]]
        kind = "poisson"
        load = {load}
        size = "{payload}B"
        duration = "{duration_us}us"
        sources = ["h0"]
        dst = "h1"
        "#
    );
    let r = run(&toml);
    let flows = &r[0].flows;
    assert!(flows.len() > 1_000_000);
    let mean_fct: f64 = flows.iter().map(|f| f.fct_ns.unwrap()).sum::<f64>() / flows.len() as f64;
    // FCT of a one-packet flow = wait + service + propagation.
    (mean_fct - service_ns - delay_ns) / service_ns
}

#[test]
fn md1_mean_wait_at_load_half() {
    let rho = 0.5;
    let expected = rho / (2.0 * (1.0 - rho));
    assert_close(
        md1_mean_wait_in_service_times(rho, 11),
        expected,
        0.0,
        0.03,
        "M/D/1 at 0.5",
    );
}

#[test]
fn md1_mean_wait_at_load_0_8() {
    let rho = 0.8;
    let expected = rho / (2.0 * (1.0 - rho));
    assert_close(
        md1_mean_wait_in_service_times(rho, 12),
        expected,
        0.0,
        0.03,
        "M/D/1 at 0.8",
    );
}
