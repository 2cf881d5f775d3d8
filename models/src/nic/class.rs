//! A second traffic class with its own transport: RoCEv2 and UET flows sharing one fabric.
//!
//! `nic.class = { prio = 1, transport = "uet", cc = { kind = "nscc" }, lb = { kind = "reps" } }`
//! gives the flows of 802.1p priority `prio` that transport, congestion control and load
//! balancing; every other flow uses `nic.transport`, `nic.cc` and `nic.lb`. This is how a
//! converged fabric separates them: each transport in its own traffic class (its own
//! priority, PG and queue), PFC only on the RoCEv2 one (`pfc.priorities`), trimming acting
//! only on UET packets (they alone carry the trimmable mark), and the switch's scheduler
//! between the classes (`switch.scheduler`). UET's own spec places it on its own traffic
//! class (UEC 1.0, "Traffic classes"), and SONiC maps each DSCP to its TC, PG and queue.

use super::lb::LbConfig;
use super::{CcConfig, NicConfig, Transport};
use crate::error::FieldError;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassConfig {
    pub prio: u8,
    pub transport: Transport,
    #[serde(default)]
    pub cc: CcConfig,
    #[serde(default)]
    pub lb: LbConfig,
}

impl NicConfig {
    fn class_of(&self, prio: u8) -> Option<&ClassConfig> {
        self.class.as_ref().filter(|c| c.prio == prio)
    }

    /// The transport of flows at `prio`.
    pub fn transport_of(&self, prio: u8) -> Transport {
        self.class_of(prio).map_or(self.transport, |c| c.transport)
    }

    /// The load balancing of flows at `prio`.
    pub fn lb_of(&self, prio: u8) -> &LbConfig {
        self.class_of(prio).map_or(&self.lb, |c| &c.lb)
    }

    /// Whether any flow may use transport `t`.
    pub fn uses(&self, t: Transport) -> bool {
        self.transport == t || self.class.as_ref().is_some_and(|c| c.transport == t)
    }

    /// The congestion control of transport `t`'s flows (`CcConfig::None` if none use it).
    pub fn cc_for(&self, t: Transport) -> &CcConfig {
        const NONE: &CcConfig = &CcConfig::None;
        match &self.class {
            _ if self.transport == t => &self.cc,
            Some(c) if c.transport == t => &c.cc,
            _ => NONE,
        }
    }

    /// Both transports in one run.
    pub fn mixed(&self) -> bool {
        self.class.is_some()
    }

    pub(super) fn validate_class(&self) -> Result<(), FieldError> {
        let Some(c) = &self.class else { return Ok(()) };
        if c.prio > 7 {
            return Err(FieldError::new(
                "nic.class.prio",
                format!("802.1p priorities are 0..=7, got {}", c.prio),
            ));
        }
        if c.prio == self.control_prio {
            return Err(FieldError::new(
                "nic.class.prio",
                format!(
                    "priority {} carries the NICs' control frames (nic.control_prio)",
                    c.prio
                ),
            ));
        }
        if c.transport == self.transport {
            return Err(FieldError::new(
                "nic.class.transport",
                "the class is for the other transport: nic.transport already sets this one",
            ));
        }
        c.cc.validate("nic.class.cc", c.transport == Transport::Uet)?;
        if !c.lb.evs.is_power_of_two() || c.lb.evs > 16384 {
            return Err(FieldError::new(
                "nic.class.lb.evs",
                format!("must be a power of two from 1 to 16384, got {}", c.lb.evs),
            ));
        }
        Ok(())
    }
}
