//! Scenario errors put where the user wrote the value: deserializing with the key at fault
//! found (serde hides it inside tagged tables), and every error given its file, line, variant
//! and `--set` argument.

use super::error::{FieldError, Origin, ScenarioError, Seg, line_col, locate, parse_path};
use super::{ScenarioFile, Variant, tiers, variant, wording};
use crate::topology::Topology;
use sim_core::Duration;
use toml::Value;

/// Deserialize, reporting an error as (dotted key path, message).
fn try_deserialize(v: Value) -> Result<ScenarioFile, (String, String)> {
    serde_path_to_error::deserialize::<_, ScenarioFile>(v).map_err(|e| {
        let mut path = e.path().to_string();
        let msg = e.inner().message().to_string();
        // For an unknown field the path names its table; point at the field itself.
        if let Some(field) = msg
            .strip_prefix("unknown field `")
            .and_then(|m| m.split('`').next())
        {
            if path == "." {
                path = field.to_string();
            } else if !path.ends_with(&format!(".{field}")) && path != field {
                path = format!("{path}.{field}");
            }
        }
        // A missing field is named in full: `topology`, `topology.hosts`.
        if let Some(field) = msg
            .strip_prefix("missing field `")
            .and_then(|m| m.split('`').next())
        {
            path = match path.as_str() {
                "" | "." => field.to_string(),
                p => format!("{p}.{field}"),
            };
        }
        (path, msg)
    })
}

fn get<'v>(v: &'v Value, path: &[Seg]) -> Option<&'v Value> {
    path.iter().try_fold(v, |v, seg| match (seg, v) {
        (Seg::Key(k), Value::Table(t)) => t.get(k),
        (Seg::Index(i), Value::Array(a)) => a.get(*i),
        _ => None,
    })
}

fn remove(v: &mut Value, path: &[Seg]) {
    let Some((last, parent)) = path.split_last() else {
        return;
    };
    let parent = parent.iter().try_fold(v, |v, seg| match (seg, v) {
        (Seg::Key(k), Value::Table(t)) => t.get_mut(k),
        (Seg::Index(i), Value::Array(a)) => a.get_mut(*i),
        _ => None,
    });
    if let (Some(Value::Table(t)), Seg::Key(k)) = (parent, last) {
        t.remove(k);
    }
}

/// The deepest key under `at` whose removal changes the error `msg`: the key at fault.
fn blame(root: &Value, at: Vec<Seg>, msg: &str) -> String {
    let mut at = at;
    while let Some(Value::Table(t)) = get(root, &at) {
        let culprit = t.keys().filter(|k| *k != "kind").find(|k| {
            let mut path = at.clone();
            path.push(Seg::Key((*k).clone()));
            let mut trial = root.clone();
            remove(&mut trial, &path);
            try_deserialize(trial).err().is_none_or(|(_, m)| m != msg)
        });
        match culprit {
            Some(k) => at.push(Seg::Key(k.clone())),
            None => break,
        }
    }
    at.iter()
        .map(|s| match s {
            Seg::Key(k) => format!(".{k}"),
            Seg::Index(i) => format!("[{i}]"),
        })
        .collect::<String>()
        .trim_start_matches('.')
        .to_string()
}

pub(super) struct Ctx<'a> {
    pub src: &'a str,
    pub file: &'a str,
    pub set: &'a [String],
}

impl Ctx<'_> {
    pub fn deserialize(&self, v: Value, variant: Option<usize>) -> Result<ScenarioFile, ScenarioError> {
        let (path, msg) = match try_deserialize(v.clone()) {
            Ok(file) => return Ok(file),
            Err(e) => e,
        };
        // serde buffers tagged enums (`kind = ...`), which hides the key inside them that
        // failed: find it by asking which key's removal changes the error.
        if msg.starts_with("missing field") {
            // Named in full by try_deserialize; the error points at the nearest written table.
            let words = wording::in_user_words(&msg, &path);
            return Err(self.field(FieldError::new(path, words), variant));
        }
        let mut at = parse_path(&path);
        while !at.is_empty() && get(&v, &at).is_none() {
            at.pop(); // an unknown key: start from the nearest table that exists
        }
        let path = match get(&v, &at) {
            Some(Value::Table(_)) => blame(&v, at, &msg),
            _ => path,
        };
        let words = wording::in_user_words(&msg, &path);
        Err(self.field(FieldError::new(path, words), variant))
    }

    pub fn variant(
        &self,
        name: &str,
        f: &ScenarioFile,
        tiers: Vec<tiers::Tier>,
        topo: &Topology,
        index: Option<usize>,
    ) -> Result<Variant, ScenarioError> {
        let key = |k: &str| index.map_or(k.to_string(), |i| format!("variant[{i}].{k}"));
        f.switch.validate().map_err(|e| self.field(e, index))?;
        f.nic.validate().map_err(|e| self.field(e, index))?;
        f.pfc.validate().map_err(|e| self.field(e, index))?;
        f.check.validate().map_err(|e| self.field(e, index))?;
        let fastest = topo
            .links
            .iter()
            .map(|l| l.rate)
            .max()
            .unwrap_or(sim_core::BitRate(1));
        let slowest = topo
            .links
            .iter()
            .map(|l| l.rate)
            .min()
            .unwrap_or(sim_core::BitRate(1));
        f.pfc
            .validate_rates(fastest, slowest, f.nic.max_frame())
            .map_err(|e| self.field(e, index))?;
        let tiers = tiers::with_node_asics(tiers, &f.switch, &f.pfc, topo);
        let resolved =
            variant::resolve(&f.switch, &tiers, &f.nic, &f.pfc, topo).map_err(|e| self.field(e, index))?;
        if f.run.sample_interval == Duration::ZERO {
            return Err(self.field(
                FieldError::new(key("run.sample_interval"), "must be greater than zero"),
                None,
            ));
        }
        for (name, zero) in [
            ("run.max_time", f.run.max_time == Some(Duration::ZERO)),
            ("run.max_events", f.run.max_events == Some(0)),
            ("run.max_wall", f.run.max_wall == Some(Duration::ZERO)),
            ("run.max_samples", f.run.max_samples == 0),
        ] {
            if zero {
                return Err(self.field(FieldError::new(key(name), "must be greater than zero"), None));
            }
        }
        Ok(Variant {
            name: name.to_string(),
            switch: f.switch.clone(),
            nic: f.nic.clone(),
            pfc: f.pfc.clone(),
            limits: f.run.clone(),
            resolved,
            sonic: None,
            tiers,
            silence: f.check.silence.clone(),
            findings: Vec::new(),
        })
    }

    /// Attach file, line and origin to a field error. For a variant, the key is looked up
    /// in that variant's table first, then in the base.
    pub fn field(&self, e: FieldError, variant: Option<usize>) -> ScenarioError {
        let segs = parse_path(&e.path);
        // In variant i, the key may be written (in the file or a --set) as variant[i].key.
        let in_variant: Option<Vec<Seg>> = variant.map(|i| {
            let mut v = vec![Seg::Key("variant".into()), Seg::Index(i)];
            v.extend(segs.iter().cloned());
            v
        });
        let overlaps = |k: &[Seg], p: &[Seg]| p.starts_with(k) || k.starts_with(p);
        let variant_key = variant.map(|i| format!("variant[{i}].{}", e.path));
        let from_cli = self.set.iter().find_map(|a| {
            let (k, _) = a.split_once('=')?;
            let k = parse_path(k.trim());
            if in_variant.as_ref().is_some_and(|v| overlaps(&k, v)) {
                Some((a, variant_key.clone()))
            } else if overlaps(&k, &segs) {
                Some((a, None))
            } else {
                None
            }
        });
        if let Some((arg, vkey)) = from_cli {
            return ScenarioError {
                origin: Origin::CommandLine(arg.clone()),
                key: Some(vkey.unwrap_or(e.path)),
                message: e.message,
            };
        }
        let written_in_variant = in_variant.as_ref().and_then(|v| {
            locate(self.src, v)
                .filter(|&(_, depth)| depth == v.len())
                .map(|(o, _)| o)
        });
        let offset = written_in_variant.or_else(|| locate(self.src, &segs).map(|(o, _)| o));
        let origin = match offset {
            Some(o) => {
                let (line, column) = line_col(self.src, o);
                Origin::File {
                    file: self.file.into(),
                    line,
                    column,
                }
            }
            None => Origin::FileOnly(self.file.into()),
        };
        let (key, message) = match (written_in_variant, variant) {
            (Some(_), _) => (variant_key, e.message),
            // Written in the base, failing in this variant (with what the variant changed).
            (None, Some(i)) => (Some(e.path), format!("in variant[{i}]: {}", e.message)),
            (None, None) => ((!e.path.is_empty()).then_some(e.path), e.message),
        };
        ScenarioError { origin, key, message }
    }
}
