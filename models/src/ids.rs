//! Typed indices into the simulation's arenas. Every component lives in a `Vec` and is named
//! by its index; the newtypes keep a port index from being used as a host index.

macro_rules! id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub u32);
        impl $name {
            /// No such component: the id a field holds before it names one.
            pub const NONE: $name = $name(u32::MAX);

            #[inline]
            pub fn idx(self) -> usize {
                self.0 as usize
            }

            #[inline]
            pub fn is_none(self) -> bool {
                self == Self::NONE
            }
        }
    };
}

id!(
    /// A node: host or switch.
    NodeId
);
id!(
    /// One end of a link: a node's port, with its egress queue and its outgoing wire.
    PortId
);
id!(
    /// A host (end node with a NIC), numbered `h0..h{N-1}` in scenarios.
    HostId
);
id!(
    /// A switch.
    SwitchId
);
id!(
    /// A flow (one message from one host to another; one RoCEv2 QP or UET PDC).
    FlowId
);
