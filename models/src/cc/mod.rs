//! Congestion control algorithms, one per file: DCQCN for RoCEv2; NSCC and RCCC for UET.

pub mod dcqcn;
pub mod nscc;
pub mod rccc;

use nscc::Nscc;
use rccc::RcccSender;

/// A UET flow's congestion state: NSCC's window, RCCC's credit, both, or neither.
#[derive(Debug, Clone, Default)]
pub struct UetCc {
    pub nscc: Option<Nscc>,
    pub rccc: Option<RcccSender>,
}

impl UetCc {
    /// May a packet of `size` payload bytes go with `inflight` bytes outstanding?
    #[inline]
    pub fn allows(&self, inflight: u64, size: u64) -> bool {
        self.nscc.as_ref().is_none_or(|n| n.allows(inflight, size))
            && self.rccc.as_ref().is_none_or(|r| r.allows())
    }

    /// Bytes the sender may still put in flight before it must wait (None: no limit).
    pub fn room(&self, inflight: u64) -> Option<u64> {
        let window = self
            .nscc
            .as_ref()
            .map(|n| (n.cwnd as u64).saturating_sub(inflight));
        let credit = self.rccc.as_ref().map(|r| r.credit().max(0) as u64);
        match (window, credit) {
            (Some(w), Some(c)) => Some(w.min(c)),
            (w, c) => w.or(c),
        }
    }
}
