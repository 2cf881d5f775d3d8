//! The 400G/800G generation: 200G and 400G links, the Spectrum-3/4 and Tomahawk 4/5 profiles,
//! the ConnectX NIC models, and the DGX Spark scenario against its closed forms.

use crate::common::{assert_close, roce_wire, run, scenario, sim, tmp, tx_ns};
use models::asic::Asic;
use std::path::Path;

/// Wire bytes of a RoCEv2 message of `size` bytes at payload MTU `mtu`.
fn message_wire(size: u64, mtu: u64) -> u64 {
    let n = size.div_ceil(mtu);
    (n - 1) * roce_wire(mtu) + roce_wire(size - (n - 1) * mtu)
}

#[test]
fn one_flow_on_a_connectx_cable_takes_its_wire_bytes_over_the_rate_plus_the_cable() {
    // FCT = S_wire x 8 / C + 5 ns/m x length, at the fastest port of each NIC model.
    for (model, gbps, cable_m, size, mtu) in [
        ("connectx-6dx", 200u64, 1u64, 3_000_001u64, 4096u64),
        ("connectx-7", 400, 3, 2_000_000, 4096),
        ("connectx-7", 200, 1, 777_777, 1024),
    ] {
        let toml = format!(
            r#"
            [topology]
            kind = "back-to-back"
            link = {{ rate = "{gbps}Gbps", cable = "{cable_m}m" }}
            [nic]
            model = "{model}"
            mtu = "{mtu}B"
            [[flow]]
            src = "h0"
            dst = "h1"
            size = "{size}B"
            "#
        );
        let r = run(&toml);
        let fct = r[0].flows[0].fct_ns.unwrap();
        let expected = tx_ns(message_wire(size, mtu), gbps as f64) + 5.0 * cable_m as f64;
        assert_close(fct, expected, 10.0, 1e-3, &format!("{model} {gbps}G"));
    }
}

const TOO_FAST: &str = r#"# a 400G cable on a 200G NIC
[topology]
kind = "back-to-back"
link = { rate = "400Gbps", cable = "1m" }

[nic]
model = "connectx-6dx"

[[flow]]
src = "h0"
dst = "h1"
size = "1MB"
"#;

/// Run `text` as bad.toml: it must exit 2 and write nothing; returns stderr.
fn refused(text: &str) -> String {
    let dir = tmp("hw-bad");
    let file = dir.join("bad.toml");
    std::fs::write(&file, text).unwrap();
    let out = dir.join("out");
    let o = sim(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked") && !out.exists(), "{err}");
    err
}

#[test]
fn a_host_link_faster_than_the_nic_model_is_refused_naming_the_key_and_line() {
    let err = refused(TOO_FAST);
    // `model` is on line 7 of the file.
    assert!(
        err.contains("bad.toml:7:") && err.contains("`nic.model`"),
        "{err}"
    );
    assert!(err.contains("400Gbps") && err.contains("ConnectX-6 Dx"), "{err}");
    // Set in a variant, the variant's key is named.
    let ok_base = TOO_FAST.replace("model = \"connectx-6dx\"", "model = \"connectx-7\"");
    let err = refused(&format!(
        "{ok_base}\n[[variant]]\nname = \"ok\"\n\n[[variant]]\nname = \"dx\"\nnic.model = \"connectx-6dx\"\n"
    ));
    assert!(err.contains("`variant[1].nic.model`"), "{err}");
    // And at 200G the ConnectX-6 Dx is fine.
    scenario(&TOO_FAST.replace("400Gbps", "200Gbps"));
}

#[test]
fn an_incast_that_fits_a_new_profiles_alpha_share_finishes_at_n_s_over_c() {
    // 8 x 1 MB into one 400G egress: the queue holds at most 8 MB, under the alpha / (1 +
    // alpha) share of its slice that a lone congested lossy queue may take, so nothing drops
    // and the last flow is done at N x S_wire x 8 / C (1 %).
    let (n, size, gbps) = (8u64, 1_000_000u64, 400u64);
    for (name, asic) in [
        ("spectrum3", Asic::Spectrum3),
        ("spectrum4", Asic::Spectrum4),
        ("tomahawk4", Asic::Tomahawk4),
        ("tomahawk5", Asic::Tomahawk5),
    ] {
        let p = asic.profile();
        let alpha = 2f64.powi(p.queue_alpha_log2 as i32);
        let slice = (p.buffer / p.slices as u64) as f64;
        assert!((n * size) as f64 * 1.1 < alpha * slice / (1.0 + alpha), "{name}");
        let toml = format!(
            r#"
            [topology]
            kind = "star"
            hosts = {hosts}
            host_link = {{ rate = "{gbps}Gbps", cable = "3m" }}
            [switch]
            asic = "{name}"
            [nic]
            model = "connectx-7"
            [[workload]]
            kind = "incast"
            receiver = "h0"
            size = "{size}B"
            "#,
            hosts = n + 1
        );
        let r = run(&toml);
        assert_eq!(r[0].summary.flows_completed as u64, n, "{name}");
        assert_eq!(r[0].summary.drops, 0, "{name}");
        let expected = tx_ns(n * message_wire(size, 4096), gbps as f64);
        let makespan = r[0].summary.fct_ns.max.unwrap();
        assert_close(makespan, expected, 0.0, 0.01, name);
    }
}

#[test]
fn a_switch_takes_as_many_cables_as_its_asic_has_ports() {
    let star = |asic: &str, hosts: u32| {
        format!(
            "[topology]\nkind = \"star\"\nhosts = {hosts}\nhost_link = {{ rate = \"100Gbps\", cable = \"1m\" }}\n[switch]\nasic = \"{asic}\"\n[[flow]]\nsrc = 0\ndst = 1\nsize = \"1KB\"\n"
        )
    };
    for (asic, ports) in [
        ("spectrum3", Asic::Spectrum3.profile().ports),
        ("spectrum4", Asic::Spectrum4.profile().ports),
        ("tomahawk4", Asic::Tomahawk4.profile().ports),
        ("tomahawk5", Asic::Tomahawk5.profile().ports),
    ] {
        scenario(&star(asic, ports));
        let e =
            models::scenario::parse(&star(asic, ports + 1), "t.toml", "t", &Default::default()).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("switch.asic"), "{asic}: {e}");
    }
}

#[test]
fn the_dgx_spark_scenario_matches_its_closed_forms() {
    // Two 8 MB flows on one 200G wire: both halves take the wire's rate, one half the
    // receiver's 100 Gb/s (its NIC pauses the sender; nothing is lost): the last byte is in
    // at 2 x S_wire x 8 / rate (1 %), for MTU 1024 and, in `roce-jumbo`, 4096.
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/dgx-spark-2node.toml");
    let r = run(&std::fs::read_to_string(file).unwrap());
    let size = 8_000_000u64;
    for (variant, gbps, mtu) in [
        ("roce-both-halves", 200.0, 1024),
        ("roce-one-half", 100.0, 1024),
        ("roce-jumbo", 200.0, 4096),
    ] {
        let v = r.iter().find(|v| v.summary.name == variant).unwrap();
        assert_eq!(v.summary.flows_completed, 2, "{variant}");
        assert_eq!(v.summary.drops, 0, "{variant}");
        let expected = tx_ns(2 * message_wire(size, mtu), gbps);
        assert_close(v.summary.fct_ns.max.unwrap(), expected, 0.0, 0.01, variant);
    }
    for v in r.iter().filter(|v| v.summary.name.starts_with("uec")) {
        assert_eq!(v.summary.flows_completed, 2, "{}", v.summary.name);
    }
}
