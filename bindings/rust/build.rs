//! Links the crate against libnnrt: finds the library (locate.rs says how), tells rustc where it
//! is, and records an rpath so this crate's tests and examples run without LD_LIBRARY_PATH. An
//! rpath given here reaches only this package's own binaries (cargo does not pass link arguments
//! on to dependents), so the folder is also published as `DEP_NNRT_LIB_DIR` for the build scripts
//! of crates that use this one.

#[path = "locate.rs"]
mod locate;

use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=locate.rs");
    println!("cargo:rerun-if-env-changed=NNRT_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");

    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let search = locate::Search {
        lib_dir: env::var_os("NNRT_LIB_DIR").filter(|v| !v.is_empty()).map(PathBuf::from),
        pkg_config_path: env::var_os("PKG_CONFIG_PATH"),
        checkout_build: manifest_dir.join("../../build"),
    };
    let found = match locate::find_library(&search) {
        Ok(found) => found,
        Err(message) => {
            // A panic would bury the message under a backtrace hint; this reads as a plain error.
            eprintln!("error: {message}");
            std::process::exit(1);
        }
    };
    // An absolute path, so the rpath still holds when the binary runs from another folder.
    let dir = found.dir.canonicalize().unwrap_or(found.dir);
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=nnrt");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    println!("cargo:rustc-env=NNRT_LINKED_LIB_DIR={}", dir.display());
    println!("cargo:rustc-env=NNRT_LINKED_LIB_FOUND_BY={}", found.how);
    println!("cargo::metadata=lib_dir={}", dir.display());
}
