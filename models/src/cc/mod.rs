//! Congestion control algorithms, one per file, and the registry `nic.cc.kind` selects from.
//!
//! Every scheme implements [`api::CongestionControl`]: DCQCN's reaction point
//! ([`dcqcn::Dcqcn`]), NSCC ([`nscc::NsccSender`]), RCCC's credit ([`rccc::RcccSender`]) and
//! both together ([`sender::NsccRccc`]), line rate ([`sender::Line`]), and the plug-ins HPCC,
//! Swift and DCTCP, which [`CcConfig::build`] makes. A flow holds one [`Sender`] that forwards
//! to its scheme; [`Senders`] builds it when the flow starts. To add your own, see [`api`]
//! and `docs/congestion-control.md`.

pub mod api;
pub mod dcqcn;
pub mod dctcp;
pub mod hpcc;
pub mod nscc;
pub mod rccc;
pub mod sender;
pub mod swift;

pub use sender::{Sender, Senders};

use crate::error::FieldError;
use dcqcn::DcqcnConfig;
use nscc::NsccConfig;
use rccc::RcccConfig;
use serde::Deserialize;

/// Congestion control of the NIC's flows: `nic.cc = { kind = "...", ... }`.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum CcConfig {
    /// Line rate, no reaction to congestion.
    #[default]
    #[serde(deserialize_with = "crate::error::no_keys")]
    None,
    /// DCQCN (Zhu et al., SIGCOMM 2015) as ConnectX implements it (RoCEv2).
    Dcqcn(Box<DcqcnConfig>),
    /// UET sender-based NSCC.
    Nscc(NsccConfig),
    /// UET receiver credit-based RCCC.
    Rccc(RcccConfig),
    /// NSCC and RCCC together.
    NsccRccc {
        #[serde(default)]
        nscc: NsccConfig,
        #[serde(default)]
        rccc: RcccConfig,
    },
    /// HPCC with INT (Li et al., SIGCOMM 2019), RoCEv2.
    Hpcc(hpcc::HpccConfig),
    /// Swift (Kumar et al., SIGCOMM 2020), RoCEv2 or UET.
    Swift(swift::SwiftConfig),
    /// DCTCP's window law (RFC 8257), the worked plug-in example, RoCEv2 or UET.
    Dctcp(dctcp::DctcpConfig),
}

impl CcConfig {
    pub fn nscc(&self) -> Option<&NsccConfig> {
        match self {
            CcConfig::Nscc(c) | CcConfig::NsccRccc { nscc: c, .. } => Some(c),
            _ => None,
        }
    }

    pub fn rccc(&self) -> Option<&RcccConfig> {
        match self {
            CcConfig::Rccc(c) | CcConfig::NsccRccc { rccc: c, .. } => Some(c),
            _ => None,
        }
    }

    /// A plug-in scheme ([`api::CongestionControl`]), not one built into a transport.
    pub fn is_plugin(&self) -> bool {
        !matches!(
            self,
            CcConfig::None
                | CcConfig::Dcqcn(_)
                | CcConfig::Nscc(_)
                | CcConfig::Rccc(_)
                | CcConfig::NsccRccc { .. }
        )
    }

    /// The plug-in scheme of one flow, if this is one: the registry.
    pub fn build(&self, ctx: &api::Ctx) -> Option<Box<dyn api::CongestionControl>> {
        match self {
            CcConfig::Hpcc(c) => Some(Box::new(hpcc::Hpcc::new(c, ctx))),
            CcConfig::Swift(c) => Some(Box::new(swift::Swift::new(c, ctx))),
            CcConfig::Dctcp(c) => Some(Box::new(dctcp::Dctcp::new(c, ctx))),
            _ => None,
        }
    }

    /// The scheme's own values, checked (`at`: its key, e.g. `nic.cc`), and whether it suits
    /// the transport (`uet`).
    pub fn validate(&self, at: &str, uet: bool) -> Result<(), FieldError> {
        let params = match self {
            CcConfig::Dcqcn(_) if uet => {
                return Err(FieldError::new(
                    at,
                    "DCQCN is RoCEv2's: with transport = \"uet\" use nscc, rccc, nscc-rccc, swift or dctcp",
                ));
            }
            CcConfig::Nscc(_) | CcConfig::Rccc(_) | CcConfig::NsccRccc { .. } if !uet => {
                return Err(FieldError::new(at, "NSCC and RCCC need transport = \"uet\""));
            }
            CcConfig::Hpcc(_) if uet => {
                return Err(FieldError::new(
                    at,
                    "HPCC is RoCEv2's (its paper's transport): with transport = \"uet\" use nscc or swift",
                ));
            }
            CcConfig::Hpcc(c) => c.validate(),
            CcConfig::Swift(c) => c.validate(),
            CcConfig::Dctcp(c) if !(c.g > 0.0 && c.g <= 1.0) => {
                Err(("g", format!("must be in (0, 1], got {}", c.g)))
            }
            _ => Ok(()),
        };
        params.map_err(|(key, msg)| FieldError::new(format!("{at}.{key}"), msg))
    }
}
