//! A host NIC's counters, named as mlx5's `ethtool -S` and RDMA hw_counters name them.

/// Per-host counters (the names are the mlx5 `ethtool -S` / RDMA hw_counters ones).
#[derive(Debug, Clone, Default)]
pub struct HostCounters {
    pub data_packets_sent: u64,
    pub acks_sent: u64,
    pub naks_sent: u64,
    pub np_ecn_marked_roce_packets: u64,
    pub np_cnp_sent: u64,
    pub rp_cnp_handled: u64,
    pub rp_cnp_ignored: u64,
    pub out_of_sequence: u64,
    pub packet_seq_err: u64,
    pub local_ack_timeout_err: u64,
}
