//! `switch.sonic = "config_db.json"`: the file's settings under the scenario's own keys.

use super::overrides;
use crate::error::FieldError;
use crate::sonic::Imported;
use std::path::Path;
use toml::Table;

/// What a variant's SONiC file set, for the results.
#[derive(Debug, Clone, PartialEq)]
pub struct SonicInfo {
    /// The file as written in the scenario.
    pub file: String,
    pub imported: Imported,
    /// Keys the file set that the scenario (or `--set`) wrote over.
    pub overridden: Vec<String>,
}

/// `t` with the settings of its `switch.sonic` file (if any) beneath it: keys written in the
/// scenario (or by `--set`) win over the file's. `dir` is the scenario's directory, which a
/// relative path starts from.
pub fn with_sonic(t: &Table, dir: &Path) -> Result<(Table, Option<SonicInfo>), FieldError> {
    let Some(file) = t.get("switch").and_then(|s| s.get("sonic")) else {
        return Ok((t.clone(), None));
    };
    let file = file
        .as_str()
        .ok_or_else(|| FieldError::new("switch.sonic", "expected the path of a config_db.json"))?;
    let path = dir.join(file);
    let src = crate::input::read_text(&path, crate::input::MAX_SONIC)
        .map_err(|e| FieldError::new("switch.sonic", format!("cannot read {}: {e}", path.display())))?;
    let imported = crate::sonic::import(&src)
        .map_err(|e| FieldError::new("switch.sonic", format!("{}: {e}", path.display())))?;
    let mut merged = imported.fragment();
    overrides::merge(&mut merged, t);
    // A key the scenario writes itself (every part of its path present in `t`).
    let written = |key: &str| {
        let mut v = Some(t);
        let parts: Vec<&str> = key.split('.').collect();
        for (i, p) in parts.iter().enumerate() {
            match v.and_then(|tab| tab.get(*p)) {
                Some(_) if i + 1 == parts.len() => return true,
                Some(toml::Value::Table(next)) => v = Some(next),
                _ => return false,
            }
        }
        false
    };
    let overridden = imported
        .set
        .iter()
        .map(|(k, _)| k.clone())
        .filter(|k| written(k))
        .collect();
    let info = SonicInfo {
        file: file.to_string(),
        imported,
        overridden,
    };
    Ok((merged, Some(info)))
}

/// `e`, reported where the user wrote the value when it came from the SONiC file: the file
/// and its JSON path (`BUFFER_POOL.ingress_lossless_pool.size`), not the scenario key the
/// import turned it into. Errors of keys the scenario wrote itself are left as they are.
pub fn attribute(e: super::ScenarioError, info: Option<&SonicInfo>, dir: &Path) -> super::ScenarioError {
    let (Some(info), Some(key)) = (info, e.key.as_deref()) else {
        return e;
    };
    if matches!(e.origin, super::Origin::CommandLine(_)) {
        return e;
    }
    let key = match key.strip_prefix("variant[") {
        Some(rest) => rest.split_once("].").map_or(key, |(_, k)| k),
        None => key,
    };
    let Some(json) = info.imported.source_of(key) else {
        return e;
    };
    if info
        .overridden
        .iter()
        .any(|o| key == o || key.starts_with(&format!("{o}.")))
    {
        return e;
    }
    super::ScenarioError {
        origin: super::Origin::FileOnly(dir.join(&info.file).display().to_string()),
        key: Some(json.to_string()),
        message: format!("{} (imported as `{key}`)", e.message),
    }
}
