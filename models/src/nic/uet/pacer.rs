//! RCCC's receiver side: the credit pacer of one receiving host.
//!
//! Flows that ask for credit are served round robin, `credit_per_pull` at a time, paced so the
//! grants add up to 99 % of the receiver's line rate (uet-htsim `UecPullPacer`; UE 1.0 RCCC).
//! A flow asks with the cumulative pull target its data packets and requests to send carry;
//! the pacer grants up to the highest target it has seen. Credit is counted in quanta of 256 B
//! (uet-htsim `UEC_PULL_QUANTUM`), and each credit packet carries the flow's running total.

use crate::ids::FlowId;
use crate::nic::protocol::PacerFlow;
use crate::packet::{Kind, Packet, UET_CREDIT_FRAME};
use std::collections::VecDeque;

/// One receiver's pacer: the flows waiting for credit, and whether a grant is scheduled.
#[derive(Debug, Clone, Default)]
pub struct Pacer {
    active: VecDeque<FlowId>,
    busy: bool,
}

impl Pacer {
    /// Flow `id` wants credit: enlist it. True when the pacer was idle and must start now.
    pub fn want(&mut self, id: FlowId, flow: &mut impl PacerFlow) -> bool {
        let Some(g) = flow.grants() else {
            return false;
        };
        if !g.listed {
            g.listed = true;
            self.active.push_back(id);
        }
        !std::mem::replace(&mut self.busy, true)
    }

    /// The pacer may grant again: the next flow that still wants credit gets up to
    /// `per_pull` quanta. Returns the credit packet (at `prio`, carrying the flow's total) and
    /// the quanta granted; None when nobody wants credit (the pacer goes idle).
    pub fn grant(&mut self, flows: &mut [impl PacerFlow], per_pull: u64, prio: u8) -> Option<(Packet, u64)> {
        while let Some(f) = self.active.pop_front() {
            let flow = &mut flows[f.idx()];
            let (src, finished) = (flow.sender(), flow.done());
            let Some(g) = flow.grants() else {
                continue;
            };
            let grant = per_pull.min(g.want.saturating_sub(g.granted));
            if grant == 0 || finished {
                g.listed = false;
                continue;
            }
            g.granted += grant;
            if g.granted < g.want {
                self.active.push_back(f);
            } else {
                g.listed = false;
            }
            let mut p = Packet::control(Kind::Credit, f, src, 0, UET_CREDIT_FRAME, prio);
            p.set_credit(g.granted.min(u32::MAX as u64) as u32);
            return Some((p, grant));
        }
        self.busy = false;
        None
    }
}
