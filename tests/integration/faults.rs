//! Faults: a failed cable carries nothing while down; flows reroute or are reported.

use crate::common::*;
use models::sim::Sim;

const FABRIC: &str = r#"
    [topology]
    kind = "leaf-spine"
    leaves = 2
    spines = 2
    hosts_per_leaf = 4
    host_link = { rate = "100Gbps", delay = "500ns" }
    fabric_link = { rate = "100Gbps", delay = "500ns" }
    [switch]
    trim = { threshold = "200KB" }
    failover = "20us"
    [nic]
    transport = "uet"
    lb = { kind = "oblivious" }
    cc = { kind = "nscc" }
    [[flow]]
    src = 0
    dst = 4
    size = "4MB"
    [[flow]]
    src = 1
    dst = 5
    size = "4MB"
"#;

/// Bytes sent onto leaf0's cable to spine1 by `until_us` (or the whole run).
fn uplink_bytes(toml: &str, until_us: Option<u64>) -> u64 {
    let text = match until_us {
        Some(t) => format!("{toml}\n[run]\nmax_time = \"{t}us\"\n"),
        None => toml.to_string(),
    };
    let s = scenario(&text);
    let mut sim = Sim::new(&s, &s.variants[0]);
    sim.run();
    let net = &sim.net;
    let node = |n: &str| models::ids::NodeId(net.names.iter().position(|x| x == n).unwrap() as u32);
    let p = net.port_between(node("leaf0"), node("spine1"), 0).unwrap();
    net.ports[p.idx()].tx.bytes
}

#[test]
fn a_failed_uplink_carries_nothing_and_flows_reroute() {
    let toml =
        format!("{FABRIC}\n[[fault]]\nlink = [\"leaf0\", \"spine1\"]\nkind = \"down\"\nat = \"100us\"\n");
    let before = uplink_bytes(&toml, Some(100));
    assert!(before > 0, "spraying used the uplink before it failed");
    assert_eq!(
        uplink_bytes(&toml, None),
        before,
        "nothing crossed the cable after it failed"
    );
    let r = run(&toml).remove(0);
    assert_eq!(
        r.summary.flows_completed, 2,
        "both flows finish over the other spine"
    );
    assert!(
        r.summary.drops_by_reason["link_down"] > 0,
        "what was on the cable is counted lost"
    );
}

#[test]
fn a_repaired_uplink_is_used_again() {
    let toml = format!(
        "{FABRIC}\n[[fault]]\nlink = [\"leaf0\", \"spine1\"]\nkind = \"down\"\nat = \"50us\"\nuntil = \"150us\"\n"
    );
    let down = uplink_bytes(&toml, Some(150));
    assert!(
        uplink_bytes(&toml, None) > down,
        "traffic returns after the repair"
    );
    assert_eq!(run(&toml).remove(0).summary.flows_completed, 2);
}

#[test]
fn a_host_cut_off_for_good_leaves_its_flow_unfinished_with_a_reason() {
    let toml = format!(
        "{FABRIC}\n[run]\nmax_time = \"2ms\"\n[[fault]]\nlink = [\"h4\", \"leaf1\"]\nkind = \"down\"\nat = \"20us\"\n"
    );
    let r = run(&toml).remove(0);
    assert_eq!(r.summary.flows_completed, 1);
    let lost = r.flows.iter().find(|f| f.dst == "h4").unwrap();
    // Still sending into the dead cable when run.max_time stopped the run: the cause it
    // names is that no path is left to h4, and the stop with it.
    assert!(
        matches!(&lost.status, models::report::FlowStatus::Unfinished(u) if u.why == models::report::Why::NoRoute
            && u.detail.contains("to h4: the fabric has no path") && u.detail.contains("stopped by run.max_time")),
        "{}",
        lost.status
    );
    assert!(r.summary.invariants.iter().all(|i| i.ok));
}
