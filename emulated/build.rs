//! Links the harness as a static, position-dependent executable with no C runtime: `_start` is its own
//! (src/main.rs), so that the same file runs under Linux and, loaded by `run.py`, on a bare emulated CPU.
fn main() {
    for arg in ["-nostartfiles", "-nostdlib", "-static", "-no-pie"] {
        println!("cargo:rustc-link-arg-bins={arg}");
    }
}
