//! (6) A missing library fails, never skips: the build stops with a message saying what to set, and
//! a program whose library cannot be loaded does not start.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../locate.rs"]
mod locate;

use crate::common::temp_path;

/// The folder build.rs linked against.
const LINKED_DIR: &str = env!("NNRT_LINKED_LIB_DIR");

fn empty_dir(name: &str) -> PathBuf {
    let dir = temp_path(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn nothing_found_is_an_error_that_says_what_to_set() {
    let nowhere = empty_dir("no-library");
    let search = locate::Search {
        lib_dir: None,
        pkg_config_path: Some(nowhere.clone().into_os_string()),
        checkout_build: nowhere.clone(),
    };
    let message = locate::find_library(&search).err().expect("no library to find");
    assert!(message.contains("cannot find the nnrt library"), "{message}");
    assert!(message.contains("NNRT_LIB_DIR"), "{message}");
    assert!(message.contains("PKG_CONFIG_PATH"), "{message}");
    assert!(message.contains(nowhere.to_str().unwrap()), "{message}");
}

#[test]
fn a_wrong_nnrt_lib_dir_is_an_error_not_a_fallback() {
    let nowhere = empty_dir("wrong-lib-dir");
    let search = locate::Search {
        lib_dir: Some(nowhere.clone()),
        pkg_config_path: None,
        checkout_build: PathBuf::from(LINKED_DIR), // would be found, but NNRT_LIB_DIR wins
    };
    let message = locate::find_library(&search).err().expect("NNRT_LIB_DIR names an empty folder");
    assert!(message.contains("NNRT_LIB_DIR") && message.contains(nowhere.to_str().unwrap()), "{message}");
}

#[test]
fn the_three_rules_find_the_library() {
    let linked = PathBuf::from(LINKED_DIR);
    let nowhere = empty_dir("rules-nowhere");
    let by_env =
        locate::Search { lib_dir: Some(linked.clone()), pkg_config_path: None, checkout_build: nowhere.clone() };
    assert_eq!(locate::find_library(&by_env).unwrap().how, "NNRT_LIB_DIR");

    // A pkg-config file of our own, pointing at the linked folder.
    let pc_dir = empty_dir("pkgconfig");
    let pc = format!("Name: nnrt\nDescription: test\nVersion: 0.1.0\nLibs: -L{} -lnnrt\n", linked.display());
    std::fs::write(pc_dir.join("nnrt.pc"), pc).unwrap();
    let by_pkg_config =
        locate::Search { lib_dir: None, pkg_config_path: Some(pc_dir.into_os_string()), checkout_build: nowhere };
    let found = locate::find_library(&by_pkg_config).unwrap();
    assert_eq!((found.how, found.dir), ("pkg-config", linked.clone()));

    let by_checkout = locate::Search {
        lib_dir: None,
        pkg_config_path: Some(empty_dir("pkgconfig-empty").into_os_string()),
        checkout_build: linked,
    };
    assert_eq!(locate::find_library(&by_checkout).unwrap().how, "checkout build folder");
}

#[test]
fn the_build_fails_when_nnrt_lib_dir_holds_no_library() {
    // A real cargo build of this crate, in its own target folder so it never waits for the outer
    // build's lock. Only the build script runs before the failure.
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new(env!("CARGO"))
        .args(["build", "--offline", "--lib", "--quiet", "--manifest-path"])
        .arg(manifest_dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("missing-library-build"))
        .env("NNRT_LIB_DIR", empty_dir("build-without-library"))
        .output()
        .expect("cargo runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "the build should fail:\n{stderr}");
    assert!(stderr.contains("holds no libnnrt.so"), "{stderr}");
}

#[test]
fn a_program_whose_library_cannot_be_loaded_does_not_start() {
    // Run this very test binary through the dynamic loader with its rpath ignored and no
    // LD_LIBRARY_PATH: libnnrt.so.1 is then nowhere to be found, and the loader must refuse to start
    // the program rather than let any test run (and pass) without the library.
    let loader = dynamic_loader().expect("the dynamic loader appears in /proc/self/maps");
    let output = Command::new(loader)
        .args(["--inhibit-rpath", ""])
        .arg(std::env::current_exe().unwrap())
        .arg("--list")
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("the loader runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "started without the library:\n{stderr}");
    assert!(stderr.contains("libnnrt.so"), "{stderr}");
}

/// The dynamic loader this process was started with (ld-linux-*.so.*), as mapped into it.
fn dynamic_loader() -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .find(|path| path.rsplit('/').next().is_some_and(|name| name.starts_with("ld-linux")))
        .map(PathBuf::from)
}
