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
}
