//! Lay out the code a run executes first and together (`link/symbol-order.txt`, made by
//! `link/symbol-order.sh`), so that a run keeps less of the binary resident: the kernel maps a
//! file's pages in 64 KiB runs around each page a process touches, and the under 2 MB of
//! code a run executes was spread over all 5.3 MB of the text (docs/performance.md, "Memory").
//!
//! Only with a linker known to take `--symbol-ordering-file`: rustc's own LLD, the default
//! linker of x86_64 Linux since Rust 1.90, unless the build's flags choose another. Elsewhere
//! the binary is linked as before. The list names functions in Rust's v0 mangling
//! (`.cargo/config.toml`), whose names do not move when the code around them changes. It only
//! moves functions: a name the binary lacks (code since removed, another rustc or version of
//! the project, a `RUSTFLAGS` that replaces the project's flags) is skipped.

use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    let order = Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join("link/symbol-order.txt");
    println!("cargo:rerun-if-changed={}", order.display());
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SIM_NO_SYMBOL_ORDER");
    if env::var_os("SIM_NO_SYMBOL_ORDER").is_some() || !order.is_file() || !rust_lld() {
        return;
    }
    println!(
        "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
        order.display()
    );
    // Names the binary lacks are expected (see above), not worth a warning each.
    println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
}

/// Does this build link with rustc's LLD? x86_64 Linux (GNU) with rustc 1.90 or later, and no
/// flag that picks the linker or its features.
fn rust_lld() -> bool {
    let var = |k: &str| env::var(k).unwrap_or_default();
    if var("CARGO_CFG_TARGET_ARCH") != "x86_64"
        || var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
        || env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_some()
    {
        return false;
    }
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    if ["linker", "link-self-contained", "fuse-ld"]
        .iter()
        .any(|f| flags.contains(f))
    {
        return false;
    }
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let Ok(out) = Command::new(rustc).arg("-vV").output() else {
        return false;
    };
    // "release: 1.95.0"
    let text = String::from_utf8_lossy(&out.stdout);
    let minor = text
        .lines()
        .find_map(|l| l.strip_prefix("release: 1."))
        .and_then(|v| v.split('.').next()?.parse::<u32>().ok());
    minor.is_some_and(|m| m >= 90)
}
