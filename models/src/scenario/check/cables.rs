//! Cables: ends that cannot agree. A cable whose two ends run different FEC modes never
//! comes up (802.3 clause 91.5.3.1: the receiver cannot lock onto codeword markers the other
//! end does not send, and a port without FEC sees them as errors), so the run routes around it
//! or, for a host's only cable, cannot deliver at all: the homelab classic of a 100G switch
//! port left at its default FEC against a NIC set to another.

use super::{Finding, Level};
use crate::fec::{BitErrors, Fec};
use crate::llr::{FrameAction, LlrNote};
use crate::topology::Topology;

/// The code 802.3 runs at `rate`: RS(528,514) at 25G and 100G on NRZ lanes (clauses 108,
/// 91), RS(544,514) at 50G and at 200G and up (clauses 134, 119; 100G on PAM4 lanes also).
fn code_for(rate: sim_core::BitRate) -> Fec {
    match rate.as_gbps() {
        g if (g - 25.0).abs() < 1.0 || (g - 100.0).abs() < 1.0 => Fec::Rs528,
        _ => Fec::Rs544,
    }
}

pub fn check(topo: &Topology, out: &mut Vec<Finding>) {
    // Bit errors with the FEC off, at speeds 802.3 runs RS-FEC at: each frame pays them.
    for (key, rate, ber) in &topo.unprotected {
        let frame = 4158; // a 4 KiB RoCEv2 payload's frame
        let raw = BitErrors::new(*ber, Fec::None).frame_loss(frame);
        let code = code_for(*rate);
        let coded = BitErrors::new(*ber, code).frame_loss(frame);
        let coded = match coded {
            c if c > 1e-300 => format!("about one in {:.0e}", 1.0 / c),
            _ => "fewer than one in 1e300".to_string(),
        };
        out.push(Finding {
            level: Level::Warning,
            id: "ber-without-fec",
            key: format!("{key}.fec"),
            file: None,
            problem: format!(
                "{rate} cables with bit errors before FEC ({ber:e}) and the FEC off: a {frame} B \
                 frame is lost with {raw:.2e} (lost frames cost go-back-N a resend of everything \
                 after them, or an ACK timeout); with {} it would lose {coded}",
                code.name()
            ),
            fix: format!(
                "fec = \"{}\" on both ends, as 802.3 runs this speed (and as most NICs and \
                 switches negotiate)",
                code.name()
            ),
        });
    }
    for (key, note) in &topo.llr_notes {
        out.push(llr_finding(key, *note));
    }
    let down = topo.links.iter().filter(|l| !l.up).count();
    for m in &topo.fec_mismatches {
        out.push(Finding {
            level: Level::Warning,
            id: "fec-mismatch",
            key: m.key.clone(),
            file: None,
            problem: format!(
                "one end runs FEC {} and the other {}: these cables never come up ({down} \
                 cable{} down for the whole run); traffic routes around them, and a host whose \
                 only cable it is cannot send or receive",
                m.ends[0].name(),
                m.ends[1].name(),
                if down == 1 { "" } else { "s" },
            ),
            fix: format!(
                "set both ends to the same mode: fec = \"{}\" (what the port's speed needs: \
                 rs-528 at 25G and 100G NRZ, rs-544 at 50G and up on PAM4 lanes)",
                if m.ends[0] == crate::fec::Fec::None {
                    m.ends[1].name()
                } else {
                    m.ends[0].name()
                }
            ),
        });
    }
}

/// What a cable's LLR setting will do that its user likely did not mean.
fn llr_finding(key: &str, note: LlrNote) -> Finding {
    let (id, problem, fix) = match note {
        LlrNote::Mismatched => (
            "llr-mismatch",
            "link level retry is on at one end only: the other never echoes LLR_INIT, so the \
             cable runs without LLR (frames sent best effort, as SAI's INIT_LLR_FRAME_ACTION \
             default says) and a corrupted frame is lost end to end"
                .to_string(),
            "llr = true on both ends (or false on both)",
        ),
        LlrNote::StaysInFlush(action) => (
            "llr-stays-in-flush",
            format!(
                "re_init_on_flush = false: a sender that flushes (replay_count replays in a row, \
                 or pcs_lost_timeout or data_age_timeout passed) stays in FLUSH for the rest of \
                 the run, as SAI has it until management acts; its new frames are then {}",
                match action {
                    FrameAction::BestEffort => {
                        "sent best effort, without LLR: a corrupted frame is lost end to end"
                    }
                    FrameAction::Block =>
                        "held (flush_action = \"block\"): the cable stops carrying data for good",
                    FrameAction::Discard =>
                        "discarded (flush_action = \"discard\"): the cable drops all data for good",
                }
            ),
            "re_init_on_flush = true (SONiC's llrorch always sets RE_INIT_ON_FLUSH; the default here)",
        ),
    };
    Finding {
        level: Level::Warning,
        id,
        key: key.to_string(),
        file: None,
        problem,
        fix: fix.to_string(),
    }
}

/// The LLR the files give their ports, against the cables' other ends
/// (`crate::scenario::port_llr`): cables that run without it although a file turns it on (a
/// warning per file and cause), and the cables it runs on (a note per file).
pub fn check_llr(topo: &Topology, v: &crate::scenario::Variant, out: &mut Vec<Finding>) {
    use crate::scenario::port_llr::{FileEnd, Outcome};
    use std::collections::BTreeMap;
    let mut off: BTreeMap<(&str, &'static str), Vec<String>> = BTreeMap::new();
    let mut on: BTreeMap<&str, (usize, Vec<String>)> = BTreeMap::new();
    let cables = crate::scenario::port_llr::cables(topo, v);
    for c in &cables {
        let l = &topo.links[c.link];
        let flag = |b: bool| if b { "enabled" } else { "disabled" };
        let side = |e: &Option<FileEnd>, node| match (e, l.llr_ends) {
            (Some(e), _) if e.profile.is_none() => format!("{} {} has no profile", e.switch, e.port),
            (Some(e), _) => format!(
                "{} {} llr_local {} llr_remote {}",
                e.switch,
                e.port,
                flag(e.local),
                flag(e.remote)
            ),
            (None, Some(s)) => format!(
                "{} llr = {} (the scenario's)",
                topo.node_name(node),
                s[usize::from(node != l.a)]
            ),
            (None, None) => format!("{} follows", topo.node_name(node)),
        };
        let first = c.ends.iter().flatten().next().expect("a file sets an end");
        let id = match &c.outcome {
            Outcome::On(_) => {
                let e = on.entry(first.file.as_str()).or_default();
                e.0 += 1;
                for p in c.ends.iter().flatten().filter_map(|e| e.profile.as_ref()) {
                    if !e.1.contains(&p.0) {
                        e.1.push(p.0.clone());
                    }
                }
                continue;
            }
            Outcome::Off => continue,
            Outcome::Mismatch => "llr-mismatch",
            Outcome::OneWay => "llr-one-way",
        };
        off.entry((first.file.as_str(), id)).or_default().push(format!(
            "{}, {}",
            side(&c.ends[0], l.a),
            side(&c.ends[1], l.b)
        ));
    }
    for ((file, id), cables) in off {
        let n = cables.len();
        let (why, fix) = match id {
            "llr-mismatch" => (
                "LLR is on at one end and not at the other, or only partly (a receiver \
                 without its transmitter), so no direction has it at both its sender and its \
                 receiver",
                "enable llr_local and llr_remote at both ends (LLR_PORT in each box's file, or \
                 llr = true on the cable in the scenario), or at neither",
            ),
            _ => (
                "only one direction has LLR at its sender (llr_remote) and its receiver \
                 (llr_local); the model runs LLR on a cable both ways or not at all",
                "enable llr_local and llr_remote at both ends, as the UE negotiation does once \
                 each end supports LLR",
            ),
        };
        out.push(Finding {
            level: Level::Warning,
            id,
            key: "LLR_PORT.*".into(),
            file: Some(file.to_string()),
            problem: format!(
                "{n} cable{} run{} without link level retry: {why}: {}; a corrupted frame on {} \
                 is lost end to end",
                if n == 1 { "" } else { "s" },
                if n == 1 { "s" } else { "" },
                super::listed(&cables, 3, "; "),
                if n == 1 { "it" } else { "them" },
            ),
            fix: fix.into(),
        });
    }
    for (file, (n, profiles)) in on {
        out.push(Finding {
            level: Level::Note,
            id: "sonic-llr",
            key: "LLR_PORT.*".into(),
            file: Some(file.to_string()),
            problem: format!(
                "the file's ports run link level retry on {n} cable{} (LLR_PROFILE {}): a \
                 corrupted frame is replayed on its cable, and the flush re-initialises (SONiC's \
                 llrorch sets RE_INIT_ON_FLUSH on every profile)",
                if n == 1 { "" } else { "s" },
                profiles.join(", ")
            ),
            fix: "nothing to do if the box runs it; llr_local and llr_remote disabled in the \
                  file (or llr = false on the cable) runs without it"
                .into(),
        });
    }
}
