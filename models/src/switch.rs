//! Output-queued switch with a byte-limited buffer per egress port and drop-tail admission.
//!
//! The packet is routed on arrival (store and forward), admitted to its egress port's buffer
//! if the frame fits, and dropped otherwise (tail drop, as a static per-port buffer allocation
//! behaves; e.g. "Broadcom Smart-Buffer" white paper, static mode). The shared-buffer MMU with
//! dynamic thresholds, PFC and ECN replaces this admission step; the path stays the same.

use crate::scenario::FieldError;
use serde::Deserialize;
use sim_core::Bytes;

/// `[switch]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    /// Buffer each egress port may hold (frame bytes, waiting and in service).
    #[serde(default = "default_buffer")]
    pub buffer_per_port: Bytes,
}

/// 1 MiB per port: about 32 MB shared by 32 ports, as on a Trident 3 (AS7726-32X).
fn default_buffer() -> Bytes {
    Bytes(1 << 20)
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer_per_port: default_buffer(),
        }
    }
}

impl SwitchConfig {
    pub fn validate(&self) -> Result<(), FieldError> {
        if self.buffer_per_port.0 < 64 {
            return Err(FieldError::new(
                "switch.buffer_per_port",
                format!(
                    "must hold at least one minimum frame (64B), got {}",
                    self.buffer_per_port
                ),
            ));
        }
        Ok(())
    }

    /// Drop-tail admission: does a frame of `frame` bytes fit next to `occupancy`?
    #[inline]
    pub fn admits(&self, occupancy: u64, frame: u32) -> bool {
        occupancy + frame as u64 <= self.buffer_per_port.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_buffer_drops_the_tail() {
        let c = SwitchConfig {
            buffer_per_port: Bytes(10_000),
        };
        assert!(c.admits(5_842, 4_158));
        assert!(!c.admits(5_843, 4_158));
    }
}
