//! The directory a command writes its results to (`--out`), so that no user file is ever lost
//! and no reader ever sees half a set of results.
//!
//! - **Only our own directories are replaced.** Every results directory holds a marker,
//!   `.sim-results`, naming the command that wrote it and every file it wrote. A directory is
//!   replaced only when it is absent, empty, or holds that marker and nothing it does not
//!   list; anything else is refused before the run starts (exit 2), naming the path and the
//!   first foreign file. A run's results are never replaced by a comparison or a sweep, nor
//!   the other way round.
//! - **Crash-safe.** Results are written into a staging directory beside `--out`
//!   (`.NAME.writing-PID`), created before the simulation starts (so an impossible `--out`
//!   fails at once, not after an hour), then swapped with the earlier results in one
//!   `renameat2(RENAME_EXCHANGE)` (Linux), so a SIGKILL at any moment leaves at `--out` the
//!   complete earlier results or the complete new ones. Where the exchange is not supported,
//!   the earlier results are first renamed aside (`.NAME.old-PID`) and recovered by the next
//!   command if it was killed in between.
//! - **Stale staging is cleaned.** The staging directory's marker is held under an exclusive
//!   `flock` while its process lives; a later command removes staging left by dead processes
//!   (or restores set-aside results, see above).

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::exit::BadInput;

/// The marker file in every results directory this tool writes.
pub const MARKER: &str = ".sim-results";

/// Which command wrote a results directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Run,
    Compare,
    Sweep,
}

impl Kind {
    fn command(self) -> &'static str {
        match self {
            Kind::Run => "sim run",
            Kind::Compare => "sim compare",
            Kind::Sweep => "sim sweep / sim merge",
        }
    }
}

#[derive(Serialize, Deserialize)]
struct Marker {
    tool: String,
    kind: Kind,
    version: String,
    /// The command that wrote the directory, as typed (absent in earlier versions' markers).
    #[serde(default)]
    command_line: Vec<String>,
    /// Every file written, relative to the directory, `/`-separated.
    files: Vec<String>,
}

/// Results being written: a private staging directory that becomes `--out` on [`commit`].
/// Dropped without a commit (an error, a panic), it is removed.
///
/// [`commit`]: Staging::commit
pub struct Staging {
    out: PathBuf,
    path: PathBuf,
    kind: Kind,
    /// The staging marker, held under an exclusive lock while this process writes.
    lock: File,
    done: bool,
}

impl Staging {
    /// Check that `out` can take results of `kind` and is none of the command's `inputs`
    /// (files or directories it reads), clean staging left by dead processes, and create the
    /// staging directory beside `out`. Call before doing the work.
    pub fn prepare(out: &Path, kind: Kind, inputs: &[&Path]) -> Result<Staging> {
        let (out, parent, name) = resolve(out)?;
        check_not_an_input(&out, inputs)?;
        fs::create_dir_all(&parent).map_err(|e| {
            BadInput::new(format!(
                "--out {}: cannot create {}: {e}",
                out.display(),
                parent.display()
            ))
        })?;
        clean_stale(&parent, &name, &out);
        check_replaceable(&out, kind)?;
        let path = parent.join(format!(".{name}.writing-{}", std::process::id()));
        if path.exists() {
            // This very process staged there before (a sweep's earlier attempt): ours.
            fs::remove_dir_all(&path).with_context(|| format!("removing {}", path.display()))?;
        }
        fs::create_dir(&path).map_err(|e| {
            BadInput::new(format!(
                "--out {}: cannot write results beside it ({}: {e})",
                out.display(),
                path.display()
            ))
        })?;
        let lock = File::create(path.join(MARKER))
            .and_then(|f| lock_exclusive(&f).map(|()| f))
            .map_err(|e| {
                BadInput::new(format!(
                    "--out {}: cannot write in {}: {e}",
                    out.display(),
                    path.display()
                ))
            });
        let lock = match lock {
            Ok(l) => l,
            Err(e) => {
                let _ = fs::remove_dir_all(&path);
                return Err(e.into());
            }
        };
        let mut s = Staging {
            out,
            path,
            kind,
            lock,
            done: false,
        };
        s.write_marker(&[])?;
        Ok(s)
    }

    /// Where to write the files.
    pub fn dir(&self) -> &Path {
        &self.path
    }

    /// Where the results will be.
    pub fn out(&self) -> &Path {
        &self.out
    }

    fn write_marker(&mut self, files: &[String]) -> Result<()> {
        let m = Marker {
            tool: "sim".into(),
            kind: self.kind,
            version: env!("CARGO_PKG_VERSION").into(),
            command_line: std::env::args().collect(),
            files: files.to_vec(),
        };
        let text = serde_json::to_string_pretty(&m)?;
        let f = &mut self.lock;
        f.set_len(0)
            .and_then(|()| {
                use std::io::Seek;
                f.seek(std::io::SeekFrom::Start(0))?;
                f.write_all(text.as_bytes())?;
                f.sync_all()
            })
            .with_context(|| format!("writing {}", self.path.join(MARKER).display()))
    }

    /// Put the staged results in place of `--out`, atomically where the OS allows.
    pub fn commit(mut self) -> Result<()> {
        let files = list_files(&self.path)?;
        self.write_marker(&files)?;
        // Someone may have put files there while we ran: refuse rather than delete them, and
        // keep the new results where they are.
        if let Err(e) = check_replaceable(&self.out, self.kind) {
            self.done = true;
            return Err(e.context(format!("the new results are kept in {}", self.path.display())));
        }
        crate::files::fault_point();
        if !self.out.exists() {
            fs::rename(&self.path, &self.out)
                .with_context(|| format!("renaming {} to {}", self.path.display(), self.out.display()))?;
        } else if exchange(&self.path, &self.out).is_ok() {
            // The staging path now holds the earlier results.
            crate::files::fault_point();
            fs::remove_dir_all(&self.path)
                .with_context(|| format!("removing the earlier results ({})", self.path.display()))?;
        } else {
            let old = self
                .path
                .with_file_name(self.path.file_name().map_or_else(String::new, |n| {
                    n.to_string_lossy().replacen(".writing-", ".old-", 1)
                }));
            fs::rename(&self.out, &old)
                .with_context(|| format!("moving the earlier {} aside", self.out.display()))?;
            crate::files::fault_point();
            fs::rename(&self.path, &self.out)
                .with_context(|| format!("renaming {} to {}", self.path.display(), self.out.display()))?;
            fs::remove_dir_all(&old).with_context(|| format!("removing {}", old.display()))?;
        }
        self.done = true;
        if let Some(parent) = self.out.parent() {
            // Make the rename durable (best effort: not every filesystem syncs directories).
            let _ = File::open(parent).and_then(|d| d.sync_all());
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.done {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

/// `out` with a symbolic link at its end followed, its parent, and its name. Refuses paths
/// that name no directory of their own (`.`, `..`, `/`).
fn resolve(out: &Path) -> Result<(PathBuf, PathBuf, String)> {
    let mut out = out.to_path_buf();
    if fs::symlink_metadata(&out).is_ok_and(|m| m.file_type().is_symlink()) {
        out = fs::canonicalize(&out).map_err(|e| {
            BadInput::new(format!(
                "--out {}: a symbolic link to nowhere: {e}",
                out.display()
            ))
        })?;
    }
    let Some(name) = out.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return Err(BadInput::new(format!(
            "--out {}: results need a directory of their own (e.g. --out results/run1), not `.`, `..` or `/`",
            out.display()
        ))
        .into());
    };
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((out, parent, name))
}

/// `results/<name>`, the default --out of a scenario or sweep named `name` (from `file`), if
/// `name` can be a directory's name.
pub fn default_out(file: &Path, name: &str) -> Result<PathBuf> {
    models::scenario::names::file_name(name, models::scenario::names::MAX_FILE_NAME).map_err(|m| {
        BadInput::new(format!(
            "{}: `name` is the results directory's name by default, and {m}: shorten it or give --out",
            file.display()
        ))
    })?;
    Ok(PathBuf::from("results").join(name))
}

/// Refuse an `out` that is one of `inputs`, holds one (replacing it would delete it: `sim
/// merge SH0 SH1 --out SH0` once took shard 0's points with it), or lies inside an input
/// directory (the results would land among what the command reads).
fn check_not_an_input(out: &Path, inputs: &[&Path]) -> Result<()> {
    let out_abs = absolute(out);
    for input in inputs {
        let Ok(input_abs) = fs::canonicalize(input) else {
            continue; // an input that does not exist is reported by its reader
        };
        let why = if input_abs == out_abs {
            "is"
        } else if input_abs.starts_with(&out_abs) {
            "holds"
        } else if out_abs.starts_with(&input_abs) {
            "is inside"
        } else {
            continue;
        };
        return Err(BadInput::new(format!(
            "--out {}: {why} {}, one of this command's inputs; replacing it would lose it: choose another --out",
            out.display(),
            input.display()
        ))
        .into());
    }
    Ok(())
}

/// `p` made absolute with symbolic links resolved, as far as it exists (the rest appended),
/// so two spellings of one path compare equal.
fn absolute(p: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut cur = p.to_path_buf();
    loop {
        if let Ok(c) = fs::canonicalize(&cur) {
            return rest.iter().rev().fold(c, |acc: PathBuf, n| acc.join(n));
        }
        match (cur.file_name().map(|n| n.to_os_string()), cur.parent()) {
            (Some(n), Some(parent)) => {
                rest.push(n);
                cur = if parent.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    parent.to_path_buf()
                };
            }
            _ => return p.to_path_buf(),
        }
    }
}

/// Refuse `out` unless it is absent, empty, or a results directory of `kind` this tool wrote
/// holding nothing but what its marker lists.
fn check_replaceable(out: &Path, kind: Kind) -> Result<()> {
    let refuse =
        |why: String| -> anyhow::Error { BadInput::new(format!("--out {}: {why}", out.display())).into() };
    let meta = match fs::symlink_metadata(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(refuse(format!("cannot inspect it: {e}"))),
        Ok(m) => m,
    };
    if !meta.is_dir() {
        return Err(refuse("exists and is not a directory".into()));
    }
    let entries: Vec<PathBuf> = fs::read_dir(out)
        .map_err(|e| refuse(format!("cannot list it: {e}")))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    if entries.is_empty() {
        return Ok(());
    }
    let marker: Option<Marker> = fs::read_to_string(out.join(MARKER))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .filter(|m: &Marker| m.tool == "sim");
    let Some(marker) = marker else {
        let old = out.join("summary.json").exists() || out.join("sweep.json").exists();
        return Err(refuse(if old {
            format!(
                "holds results without sim's `{MARKER}` marker (an earlier version's, or copied): sim replaces only directories it wrote and can account for; remove it yourself or choose another --out"
            )
        } else {
            let mut names: Vec<String> = entries
                .iter()
                .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect();
            names.sort();
            let more = match names.len() {
                1 => String::new(),
                n => format!(" and {} more", n - 1),
            };
            format!(
                "holds `{}`{more}, which sim did not write; choose another --out (results go in a directory of their own)",
                crate::console::short(&names[0])
            )
        }));
    };
    if marker.kind != kind {
        return Err(refuse(format!(
            "holds the results of `{}`; {} writes a directory of its own: choose another --out",
            marker.kind.command(),
            kind.command()
        )));
    }
    let listed: std::collections::HashSet<&str> = marker.files.iter().map(String::as_str).collect();
    if let Some(foreign) = list_files(out)?
        .into_iter()
        .find(|f| !listed.contains(f.as_str()))
    {
        return Err(refuse(format!(
            "holds `{foreign}`, which sim did not write there; move it out or choose another --out"
        )));
    }
    Ok(())
}

/// Every file under `dir` except the marker, relative, `/`-separated, sorted. Directories
/// count by the files in them; an empty directory or a symbolic link counts as itself.
fn list_files(dir: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), String::new())];
    while let Some((d, prefix)) = stack.pop() {
        let mut any = false;
        for e in fs::read_dir(&d).with_context(|| format!("listing {}", d.display()))? {
            let e = e.with_context(|| format!("listing {}", d.display()))?;
            let name = e.file_name().to_string_lossy().into_owned();
            let rel = format!("{prefix}{name}");
            any = true;
            if rel == MARKER {
                continue;
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push((e.path(), format!("{rel}/")));
            } else {
                out.push(rel);
            }
        }
        if !any && !prefix.is_empty() {
            out.push(prefix);
        }
    }
    out.sort();
    Ok(out)
}

/// Remove staging directories of `out` that no live process holds, and bring back earlier
/// results a killed process had set aside and not replaced.
fn clean_stale(parent: &Path, name: &str, out: &Path) {
    let Ok(entries) = fs::read_dir(parent) else { return };
    let writing = format!(".{name}.writing-");
    let old = format!(".{name}.old-");
    let mut stale: Vec<(PathBuf, bool)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            let set_aside = n.starts_with(&old);
            (set_aside || n.starts_with(&writing)).then(|| (e.path(), set_aside))
        })
        .filter(|(p, _)| !held_by_live_process(p))
        .collect();
    // Set-aside results first: they are the complete earlier results.
    stale.sort_by_key(|(_, set_aside)| !set_aside);
    for (p, set_aside) in stale {
        if set_aside && !out.exists() && fs::rename(&p, out).is_ok() {
            errln!(
                "recovered {}: the earlier results, set aside by a run that was killed",
                out.display()
            );
            continue;
        }
        let _ = fs::remove_dir_all(&p);
    }
}

/// Whether a staging directory belongs to a process still running: its marker is locked, or
/// (staging of an older version, without a lock) the process of its PID exists.
fn held_by_live_process(dir: &Path) -> bool {
    if let Ok(f) = File::open(dir.join(MARKER)) {
        return !try_lock_exclusive(&f);
    }
    let pid = dir
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.rsplit('-').next())
        .and_then(|p| p.parse::<u32>().ok());
    match pid {
        Some(p) if p == std::process::id() => false,
        Some(p) => Path::new("/proc").exists() && Path::new(&format!("/proc/{p}")).exists(),
        // No PID and no marker: not ours to judge; leave it.
        None => true,
    }
}

#[cfg(unix)]
fn lock_exclusive(f: &File) -> std::io::Result<()> {
    rustix::fs::flock(f, rustix::fs::FlockOperation::NonBlockingLockExclusive).map_err(std::io::Error::from)
}

#[cfg(unix)]
fn try_lock_exclusive(f: &File) -> bool {
    // Taken (and released when `f` closes) only if no live process holds it.
    rustix::fs::flock(f, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok()
}

#[cfg(not(unix))]
fn lock_exclusive(_: &File) -> std::io::Result<()> {
    Ok(())
}

#[cfg(not(unix))]
fn try_lock_exclusive(_: &File) -> bool {
    true
}

/// Swap two directories in one step (Linux `renameat2(RENAME_EXCHANGE)`).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).map_err(std::io::Error::from)
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

#[cfg(test)]
mod tests;
