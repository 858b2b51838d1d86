//! The committed header is what cbindgen makes of `src/lib.rs` today: a stale header fails here.
//!
//! `TOPK_BLESS=1 cargo test -p topk-kernels-capi --test header` rewrites it instead.

use std::path::Path;

#[test]
fn header_is_fresh() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml parses");
    // cbindgen copies numeric constants only; the version string comes from Cargo.toml here.
    config.after_includes = Some(format!(
        "\n/** The header's version, as `topk_version` returns the library's. */\n\
         #define TOPK_KERNELS_VERSION \"{}\"",
        env!("CARGO_PKG_VERSION")
    ));
    // `with_src` parses the one source file directly: no `cargo metadata`, so no network or lock waits.
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen generates the header");
    let mut fresh = Vec::new();
    bindings.write(&mut fresh);
    let fresh = String::from_utf8(fresh).expect("the header is UTF-8");
    let path = dir.join("include/topk_kernels.h");
    if std::env::var_os("TOPK_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("include/topk_kernels.h is writable");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "{} is stale; regenerate it with TOPK_BLESS=1 cargo test -p topk-kernels-capi --test header",
        path.display()
    );
}

#[test]
fn header_declares_the_abi() {
    let header = include_str!("../include/topk_kernels.h");
    for needle in [
        "typedef struct topk_tensor_desc {",
        "} topk_tensor_desc;",
        "int32_t topk1(const struct topk_tensor_desc *input,",
        "int32_t topk1_scratch_bytes(const struct topk_tensor_desc *input,",
        "size_t *bytes);",
        "const char *topk_status_message(int32_t status);",
        "const char *topk_version(void);",
        "uint32_t topk_version_number(void);",
        concat!("#define TOPK_KERNELS_VERSION \"", env!("CARGO_PKG_VERSION"), "\""),
        "#define TOPK_KERNELS_VERSION_MAJOR",
        "#define TOPK_KERNELS_VERSION_NUMBER",
        "#define TOPK_SCRATCH_ALIGNMENT 8",
        "#define TOPK_STATUS_OK 0",
        "#define TOPK_DATA_TYPE_FLOAT32 1",
        "#define TOPK_DATA_TYPE_BFLOAT16 64",
    ] {
        assert!(header.contains(needle), "the header lacks `{needle}`");
    }
}
