//! The results directory: replaced only when ours, never an input, crash-safe.

use super::*;

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn stage(out: &Path, kind: Kind, files: &[(&str, &str)]) -> Result<()> {
    let s = Staging::prepare(out, kind, &[])?;
    for (name, text) in files {
        let p = s.dir().join(name);
        fs::create_dir_all(p.parent().unwrap())?;
        fs::write(p, text)?;
    }
    s.commit()
}

#[test]
fn results_replace_results_and_nothing_else() {
    let t = tmp();
    let out = t.path().join("r");
    stage(
        &out,
        Kind::Run,
        &[("summary.json", "1"), ("points/00001/a.csv", "x")],
    )
    .unwrap();
    stage(&out, Kind::Run, &[("summary.json", "2")]).unwrap();
    assert_eq!(fs::read_to_string(out.join("summary.json")).unwrap(), "2");
    assert!(!out.join("points").exists(), "the earlier results go whole");
    // A user's file inside: refused, and the file stays.
    fs::write(out.join("notes.txt"), "mine").unwrap();
    let e = stage(&out, Kind::Run, &[("summary.json", "3")]).unwrap_err();
    assert!(
        e.downcast_ref::<BadInput>().is_some() && e.to_string().contains("notes.txt"),
        "{e}"
    );
    assert_eq!(fs::read_to_string(out.join("notes.txt")).unwrap(), "mine");
    assert_eq!(fs::read_to_string(out.join("summary.json")).unwrap(), "2");
    // Nothing staged is left beside it.
    let left: Vec<_> = fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("r")]);
}

#[test]
fn a_directory_without_the_marker_is_refused_even_with_a_summary() {
    let t = tmp();
    let out = t.path().join("r");
    fs::create_dir(&out).unwrap();
    fs::write(out.join("summary.json"), "{}").unwrap();
    fs::write(out.join("thesis.tex"), "precious").unwrap();
    let e = Staging::prepare(&out, Kind::Run, &[]).err().unwrap();
    assert!(e.to_string().contains("marker"), "{e}");
    assert_eq!(fs::read_to_string(out.join("thesis.tex")).unwrap(), "precious");
}

#[test]
fn kinds_do_not_replace_each_other() {
    let t = tmp();
    let out = t.path().join("r");
    stage(&out, Kind::Run, &[("summary.json", "1")]).unwrap();
    let e = stage(&out, Kind::Compare, &[("report.md", "x")]).unwrap_err();
    assert!(e.to_string().contains("sim run"), "{e}");
    assert_eq!(fs::read_to_string(out.join("summary.json")).unwrap(), "1");
}

#[test]
fn paths_without_a_name_of_their_own_are_refused() {
    for p in [".", "..", "/", "a/.."] {
        let e = Staging::prepare(Path::new(p), Kind::Run, &[]).err().unwrap();
        assert!(e.downcast_ref::<BadInput>().is_some(), "{p}: {e}");
    }
}

#[test]
fn an_out_that_is_holds_or_sits_in_an_input_is_refused_and_the_input_kept() {
    let t = tmp();
    let shard = t.path().join("sh0");
    stage(
        &shard,
        Kind::Sweep,
        &[("points/00000/summary.json", "1"), ("sweep.json", "{}")],
    )
    .unwrap();
    let spelled = t.path().join("x/../sh0");
    fs::create_dir(t.path().join("x")).unwrap();
    for (out, words) in [
        (shard.clone(), "is"),
        (spelled, "is"),
        (t.path().to_path_buf(), "holds"),
        (shard.join("merged"), "is inside"),
    ] {
        let e = Staging::prepare(&out, Kind::Sweep, &[&shard]).err().unwrap();
        assert!(e.downcast_ref::<BadInput>().is_some(), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains(&format!(": {words} ")) && msg.contains("sh0"),
            "{msg}"
        );
    }
    assert!(
        shard.join("points/00000/summary.json").exists(),
        "the input was kept"
    );
    // A sibling is fine.
    Staging::prepare(&t.path().join("merged"), Kind::Sweep, &[&shard]).unwrap();
}

#[test]
fn stale_staging_of_dead_processes_is_cleaned_and_set_aside_results_recovered() {
    let t = tmp();
    let out = t.path().join("r");
    // A killed run of an older layout: set aside the earlier results, died before renaming.
    let old = t.path().join(".r.old-4000000");
    fs::create_dir(&old).unwrap();
    fs::write(old.join("summary.json"), "earlier").unwrap();
    let writing = t.path().join(".r.writing-4000000");
    fs::create_dir(&writing).unwrap();
    fs::write(writing.join("summary.json"), "half").unwrap();
    // A staging of a dead process with an (unlocked) marker.
    let dead = t.path().join(".r.writing-4000001");
    fs::create_dir(&dead).unwrap();
    fs::write(dead.join(MARKER), "{}").unwrap();
    let s = Staging::prepare(&out, Kind::Run, &[]);
    // The set-aside results came back, marker-less (an earlier version's): refused, kept.
    assert!(s.is_err());
    assert_eq!(fs::read_to_string(out.join("summary.json")).unwrap(), "earlier");
    assert!(!writing.exists() && !dead.exists() && !old.exists());
}

#[test]
fn staging_held_by_a_live_process_is_left_alone() {
    let t = tmp();
    let out = t.path().join("r");
    let live = Staging::prepare(&out, Kind::Run, &[]).unwrap();
    // A second command for the same --out, while the first writes (its own PID differs
    // in real life; here the lock is what tells).
    let other = t.path().join(".r.writing-1");
    fs::rename(live.dir(), &other).unwrap();
    let s2 = Staging::prepare(&out, Kind::Run, &[]).unwrap();
    assert!(other.exists(), "a live staging was removed");
    drop(s2);
    drop(live);
    fs::remove_dir_all(&other).unwrap();
}
