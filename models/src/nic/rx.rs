//! A NIC's receive buffer, for hosts that take data slower than the link delivers it
//! (a PCIe Gen3 x8 slot behind a 100G port, a busy memory system).
//!
//! Frames wait in a FIFO drained at the host's rate. When a lossless priority's frames leave
//! the buffer with no more free space than the cable's PFC headroom, the NIC sends XOFF on
//! its port, and XON once it has drained below that point by the XON hysteresis: the
//! NIC-generated pause ConnectX documents for receive-buffer congestion ("rx_prio{p}_pause" on
//! the peer, `tx_prio{p}_pause` here). Frames that find the buffer full are discarded
//! (`rx_prio{p}_discards`).
//!
//! The thresholds follow mlx5's receive-buffer configuration (Linux
//! `drivers/net/ethernet/mellanox/mlx5/core/en/port_buffer.c`, `update_xoff_threshold`):
//! XOFF at the buffer size less the headroom (`xoff`), XON one maximum MTU below it, the
//! larger of the device's maximum MTU and 9216 B (`MINIMUM_MAX_MTU`; commit e28408e98bce,
//! "net/mlx5e: Update xon formula"). `pfc.xon_offset` overrides the hysteresis.

use crate::packet::Packet;
use crate::pool::PacketPool;
use crate::port::Port;
use sim_core::BitRate;

/// mlx5's XON hysteresis: the larger of the device's largest MTU and 9216 B.
pub fn mlx5_xon_offset(max_frame: u32) -> u64 {
    (max_frame as u64).max(9216)
}

/// A receive buffer's size, drain rate and PFC thresholds, resolved when the scenario loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxSpec {
    /// The host's drain rate.
    pub rate: BitRate,
    pub capacity: u64,
    /// Occupancy at which a lossless priority sends XOFF.
    pub xoff_at: u64,
    /// Occupancy at or below which it sends XON.
    pub xon_at: u64,
}

impl RxSpec {
    /// A buffer of `capacity` bytes drained at `rate`, keeping `headroom` free for what the
    /// cable delivers after XOFF. Fails when the headroom does not fit.
    pub fn new(rate: BitRate, capacity: u64, headroom: u64, xon_offset: u64) -> Result<RxSpec, String> {
        if headroom >= capacity {
            return Err(format!(
                "the cable needs {headroom} B of PFC headroom, more than the {capacity} B buffer"
            ));
        }
        let xoff_at = capacity - headroom;
        Ok(RxSpec {
            rate,
            capacity,
            xoff_at,
            xon_at: xoff_at.saturating_sub(xon_offset),
        })
    }
}

/// A receive buffer in a run. Not `Clone`: its drain's queue is a FIFO in the network's
/// packet pool.
#[derive(Debug)]
pub struct RxBuffer {
    /// The host's drain, modelled as a serializer at the host's rate.
    pub drain: Port,
    pub spec: RxSpec,
}

impl RxBuffer {
    pub fn new(spec: RxSpec) -> RxBuffer {
        RxBuffer {
            drain: Port::new(spec.rate),
            spec,
        }
    }

    /// Frame bytes held (waiting and being handed to the host).
    pub fn occupancy(&self) -> u64 {
        self.drain.occupancy()
    }

    /// A frame arrived: queue it, or refuse it when it does not fit. A lossless frame may use
    /// the whole buffer (the headroom is kept for it); a lossy one only up to the XOFF point.
    /// When a lossless frame brings the buffer to its XOFF point, the port must pause its
    /// peer on that priority.
    pub fn admit(&mut self, pool: &mut PacketPool, pkt: Packet, lossless: bool) -> Admit {
        let limit = if lossless {
            self.spec.capacity
        } else {
            self.spec.xoff_at
        };
        if self.occupancy() + pkt.frame as u64 > limit {
            return Admit::Refused(pkt);
        }
        self.drain.enqueue(pool, pkt);
        Admit::Queued {
            xoff: lossless && self.occupancy() >= self.spec.xoff_at,
        }
    }

    /// After the host took a frame: every priority may resume (one buffer for all of them)
    /// once it has drained to its XON point.
    pub fn may_resume(&self) -> bool {
        self.occupancy() <= self.spec.xon_at
    }
}

/// What a receive buffer did with an arriving frame.
#[derive(Debug, PartialEq, Eq)]
pub enum Admit {
    /// It does not fit (`rx_prio{p}_discards`).
    Refused(Packet),
    /// Queued; `xoff`: the buffer reached its XOFF point for this lossless frame.
    Queued { xoff: bool },
}

/// Receive buffers for every port of every host (in the order the topology lists each host's
/// cables), or none when the host drains at line rate. `latency` is the switches' pipeline
/// latency: a pause sent to a switch reaches it that much later, so headroom covers it too.
pub fn build(
    t: &crate::topology::Topology,
    nic: &super::NicConfig,
    pfc: &crate::pfc::PfcConfig,
    max_frame: u32,
    latency: sim_core::Duration,
) -> Result<Vec<Vec<RxSpec>>, crate::error::FieldError> {
    let Some(rate) = nic.rx_rate else {
        return Ok(t.hosts.iter().map(|_| Vec::new()).collect());
    };
    let mut cables: Vec<Vec<&crate::topology::LinkSpec>> = vec![Vec::new(); t.nodes.len()];
    for l in &t.links {
        cables[l.a.idx()].push(l);
        if l.b != l.a {
            cables[l.b.idx()].push(l);
        }
    }
    let mut out = Vec::with_capacity(t.hosts.len());
    for &h in &t.hosts {
        let mut bufs = Vec::new();
        for l in &cables[h.idx()] {
            let headroom = if pfc.pause_mask().is_empty() {
                0
            } else {
                crate::pfc::PfcConfig::headroom_needed(
                    l.rate,
                    l.delay + latency,
                    max_frame,
                    pfc.response_time(l.rate),
                    1,
                )
            };
            let xon_offset = pfc.xon_offset.map_or(mlx5_xon_offset(max_frame), |b| b.0);
            let b = RxSpec::new(rate, nic.rx_buffer().0, headroom, xon_offset).map_err(|e| {
                crate::error::FieldError::new("nic.rx_buffer", format!("{}: {e}", t.node_name(h)))
            })?;
            bufs.push(b);
        }
        out.push(bufs);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_leave_the_headroom_free() {
        let b = RxSpec::new(BitRate::gbps(50), 262_144, 20_000, 8_356).unwrap();
        assert_eq!((b.xoff_at, b.xon_at), (242_144, 233_788));
        assert!(
            RxSpec::new(BitRate::gbps(50), 10_000, 20_000, 0)
                .unwrap_err()
                .contains("headroom")
        );
    }

    #[test]
    fn lossy_frames_stop_at_xoff_lossless_ones_use_the_headroom_and_pause() {
        let spec = RxSpec::new(BitRate::gbps(50), 10_000, 4_000, 2_000).unwrap();
        let mut rx = RxBuffer::new(spec);
        let mut pool = PacketPool::default();
        let frame = |bytes: u16| {
            let mut p = Packet::control(
                crate::packet::Kind::Data,
                crate::ids::FlowId(0),
                crate::ids::HostId(1),
                0,
                0,
                3,
            );
            p.frame = bytes;
            p
        };
        // 5,000 B lossy: under the XOFF point (6,000 B), no pause.
        assert_eq!(
            rx.admit(&mut pool, frame(5_000), false),
            Admit::Queued { xoff: false }
        );
        // 1,500 B more lossy would pass 6,000 B: refused.
        assert!(matches!(
            rx.admit(&mut pool, frame(1_500), false),
            Admit::Refused(_)
        ));
        // The same lossless: into the headroom, and the buffer asks for XOFF.
        assert_eq!(
            rx.admit(&mut pool, frame(1_500), true),
            Admit::Queued { xoff: true }
        );
        // Past the whole buffer: refused even lossless.
        assert!(matches!(
            rx.admit(&mut pool, frame(4_000), true),
            Admit::Refused(_)
        ));
        assert!(!rx.may_resume(), "6,500 B held, over the 4,000 B XON point");
    }
}
