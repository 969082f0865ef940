//! Gives the shared library a soname (an install name on macOS) when the
//! install step (the root CMakeLists.txt) asks for one through
//! `ROOMCHAT_SONAME`, e.g. `libroomchat.so.0`. A plain `cargo build` sets none,
//! so a program linked against `target/*/libroomchat.so` keeps loading that
//! very file (the C suites do).

fn main() {
    println!("cargo:rerun-if-env-changed=ROOMCHAT_SONAME");
    let soname = std::env::var("ROOMCHAT_SONAME").unwrap_or_default();
    if soname.is_empty() {
        return;
    }
    // The target's OS, not the build machine's: cross builds set a soname too.
    match std::env::var("CARGO_CFG_TARGET_OS").as_deref() {
        Ok("macos") | Ok("ios") => {
            println!("cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/{soname}")
        }
        // A DLL is found by its file name alone.
        Ok("windows") => {}
        _ => println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}"),
    }
}
