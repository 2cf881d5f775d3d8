//! The scenario's traffic: its `[[flow]]`s and every `[[workload]]` expanded, with the jobs
//! its collectives report.

use super::ScenarioFile;
use crate::error::FieldError;
use crate::topology::Topology;
use crate::workload::{FlowSpec, explicit_flows};
use sim_core::RngStreams;
use std::path::Path;

/// Every flow of the scenario: its `[[flow]]`s, then each `[[workload]]`'s, in order. `dir` is
/// the scenario file's folder (workloads name files relative to it).
type Traffic = (Vec<FlowSpec>, Vec<crate::workload::collective::JobSpec>);

/// `memory`: the run's memory limit when one applies (the base's `run.max_memory`, else the
/// command's default), so that workloads are refused by their shape before they are built.
pub(super) fn traffic(
    base: &ScenarioFile,
    topology: &Topology,
    dir: &Path,
    memory: Option<(u64, &str)>,
) -> Result<Traffic, FieldError> {
    let streams = RngStreams::new(base.seed);
    let mut flows = explicit_flows(&base.flow, topology)?;
    let mut jobs = Vec::new();
    for (i, w) in base.workload.iter().enumerate() {
        let cap = crate::workload::FlowCap::new(flows.len(), memory, super::budget::per_flow());
        let (more, job) = w.generate_with_job(i, topology, &streams, dir, &cap)?;
        if let Some(mut job) = job {
            job.offset(flows.len() as u32);
            if jobs
                .iter()
                .any(|j: &crate::workload::collective::JobSpec| j.name == job.name)
            {
                return Err(FieldError::new(
                    format!("workload[{i}].name"),
                    format!("another collective is already named {:?}", job.name),
                ));
            }
            jobs.push(job);
        }
        crate::workload::append(&mut flows, more);
        if flows.len() > crate::workload::MAX_FLOWS {
            return Err(FieldError::new(
                format!("workload[{i}]"),
                format!(
                    "the workloads add up to more than {} flows",
                    crate::workload::MAX_FLOWS
                ),
            ));
        }
    }
    if flows.is_empty() {
        return Err(FieldError::new(
            "workload",
            "the scenario has no traffic: add [[workload]] or [[flow]]",
        ));
    }
    Ok((flows, jobs))
}
