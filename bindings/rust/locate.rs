//! Finds the folder holding libnnrt.so, the way every nnrt binding does:
//!
//! 1. `NNRT_LIB_DIR`, when set, names the folder (a wrong folder is an error, not a reason to look
//!    elsewhere: whoever set it meant that library);
//! 2. else `pkg-config --libs nnrt` (honouring `PKG_CONFIG_PATH`, so a build folder's
//!    `meson-uninstalled` variant works too);
//! 3. else the meson build folder of the checkout, `../../build` from the binding.
//!
//! This file is shared by `build.rs` and the test that checks a missing library fails the build, so
//! it depends on nothing but std and takes its inputs as arguments instead of reading the
//! environment itself.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The file the linker needs for `-lnnrt`.
pub const LIBRARY_FILE: &str = "libnnrt.so";

/// Where to look; `build.rs` fills it from its environment, tests from made-up values.
pub struct Search {
    /// The value of `NNRT_LIB_DIR`, if set (and not empty).
    pub lib_dir: Option<PathBuf>,
    /// The value of `PKG_CONFIG_PATH` to run pkg-config with (`None`: leave it unset).
    pub pkg_config_path: Option<OsString>,
    /// The checkout's meson build folder, the last resort.
    pub checkout_build: PathBuf,
}

/// A library folder and which of the three rules found it.
pub struct Found {
    /// The folder holding libnnrt.so.
    pub dir: PathBuf,
    /// "NNRT_LIB_DIR", "pkg-config" or "checkout build folder".
    pub how: &'static str,
}

/// Applies the three rules in order. The error says what each rule saw, so the reader knows what to
/// set.
pub fn find_library(search: &Search) -> Result<Found, String> {
    if let Some(dir) = &search.lib_dir {
        return if holds_library(dir) {
            Ok(Found { dir: dir.clone(), how: "NNRT_LIB_DIR" })
        } else {
            Err(format!(
                "NNRT_LIB_DIR is set to {}, but that folder holds no {LIBRARY_FILE}; \
                 point it at the folder holding the built library (e.g. the meson build folder)",
                dir.display()
            ))
        };
    }
    let pkg_config = match pkg_config_dirs(search.pkg_config_path.as_ref()) {
        Ok(dirs) => match dirs.into_iter().find(|d| holds_library(d)) {
            Some(dir) => return Ok(Found { dir, how: "pkg-config" }),
            None => format!("pkg-config found nnrt, but none of its library folders holds {LIBRARY_FILE}"),
        },
        Err(why) => why,
    };
    if holds_library(&search.checkout_build) {
        return Ok(Found { dir: search.checkout_build.clone(), how: "checkout build folder" });
    }
    Err(format!(
        "cannot find the nnrt library ({LIBRARY_FILE}):\n  \
         - NNRT_LIB_DIR is not set\n  \
         - {pkg_config}\n  \
         - the checkout's build folder {} holds no {LIBRARY_FILE} (build nnrt with meson first)\n\
         Set NNRT_LIB_DIR to the folder holding {LIBRARY_FILE}, or add the folder holding nnrt.pc \
         (or nnrt-uninstalled.pc) to PKG_CONFIG_PATH.",
        search.checkout_build.display()
    ))
}

fn holds_library(dir: &Path) -> bool {
    dir.join(LIBRARY_FILE).is_file()
}

/// The `-L` folders pkg-config gives for nnrt, then its libdir variable (an installed library in a
/// default folder has no `-L`). Err says why pkg-config gave nothing.
fn pkg_config_dirs(pkg_config_path: Option<&OsString>) -> Result<Vec<PathBuf>, String> {
    let run = |args: &[&str]| {
        let mut command = Command::new("pkg-config");
        command.args(args);
        match pkg_config_path {
            Some(path) => command.env("PKG_CONFIG_PATH", path),
            None => command.env_remove("PKG_CONFIG_PATH"),
        };
        command.output()
    };
    let libs = match run(&["--libs-only-L", "nnrt"]) {
        Err(e) => return Err(format!("pkg-config could not be run ({e})")),
        Ok(out) if !out.status.success() => {
            return Err("pkg-config does not know nnrt (no nnrt.pc on PKG_CONFIG_PATH)".to_string());
        }
        Ok(out) => String::from_utf8_lossy(&out.stdout).into_owned(),
    };
    let mut dirs: Vec<PathBuf> =
        libs.split_whitespace().filter_map(|flag| flag.strip_prefix("-L")).map(PathBuf::from).collect();
    if let Ok(out) = run(&["--variable=libdir", "nnrt"]) {
        let libdir = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if out.status.success() && !libdir.is_empty() {
            dirs.push(PathBuf::from(libdir));
        }
    }
    Ok(dirs)
}
