//! Why frames are lost, as Spectrum's What Just Happened names drop reasons: the one list
//! every counter (`drops_by_reason`, `events.csv`) is indexed by.

/// Declares the reasons once: the enum, the list in order, its length and each name.
macro_rules! drop_reasons {
    ($($(#[$doc:meta])* $reason:ident => $name:literal,)*) => {
        /// Why a frame was lost: in a switch buffer, on a cable, at a NIC, or for want of a route.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum DropReason {
            $($(#[$doc])* $reason,)*
        }

        impl DropReason {
            /// Every reason, in the order counters are indexed (`reason as usize`).
            pub const ALL: &[DropReason] = &[$(DropReason::$reason),*];
            /// How many reasons there are (per-reason counters are arrays of this size).
            pub const COUNT: usize = Self::ALL.len();

            /// The name results use (`drops_by_reason` keys, `events.csv`).
            pub fn name(self) -> &'static str {
                match self {
                    $(DropReason::$reason => $name,)*
                }
            }
        }
    };
}

drop_reasons! {
    /// A lossy queue above its dynamic threshold, or the shared pool full.
    LossyBufferFull => "lossy_buffer_full",
    /// A lossless PG whose headroom overflowed (headroom too small for the cable, or PFC off
    /// upstream).
    HeadroomExceeded => "headroom_exceeded",
    /// No route to the destination.
    NoRoute => "no_route",
    /// A frame corrupted on the wire (random loss), discarded by the receiving port's FCS check.
    LinkError => "link_error",
    /// A NIC's receive buffer overflowed (the host drains slower than the link delivers).
    NicRxFull => "nic_rx_full",
    /// Sent onto, or caught on, a cable that had failed.
    LinkDown => "link_down",
    /// Discarded by a switch's PFC watchdog (`pfc.watchdog_action = "drop"`): queued for, or
    /// arriving from, a port whose priority is in a PFC storm.
    PfcWatchdog => "pfc_watchdog",
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_indexes_every_reason_in_order() {
        for (i, r) in DropReason::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i, "{}", r.name());
        }
        assert_eq!(DropReason::COUNT, 7);
    }
}
