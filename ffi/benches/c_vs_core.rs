//! N list-users calls through the C API (the exported `extern "C"` functions,
//! called as C would: options, client handle, out-pointers, page accessors,
//! frees) and through the core client directly, against the embedded emulator,
//! alternating in rounds. Prints both and the ratio C/core (goal: at most 1.05).
//! Idle, then loaded: one busy-loop process per core beside it
//! (`scripts/bench/cpu-load.sh`), a quarter of the calls.
//!
//! `cargo bench -p roomchat-ffi --bench c_vs_core` (`ROOMCHAT_BENCH_N` sets N, default 4000).

use std::ffi::{CStr, CString};
use std::ptr;
use std::time::Duration;

use roomchat::{Client, ListUsers, RateLimitConfig};
// The exported functions, compiled into this bench exactly as in the library
// (the library is built as cdylib and staticlib only, so it has no rlib to link).
#[allow(dead_code, missing_docs, unused_imports)]
#[path = "../src/answer.rs"]
mod answer;
#[allow(dead_code, missing_docs, unused_imports)]
#[path = "../src/boundary.rs"]
mod boundary;
#[allow(
    dead_code,
    missing_docs,
    unused_imports,
    clippy::not_unsafe_ptr_arg_deref
)]
#[path = "../src/client.rs"]
mod client;
#[allow(dead_code, missing_docs, unused_imports)]
#[path = "../src/error.rs"]
mod error;
#[allow(
    dead_code,
    missing_docs,
    unused_imports,
    clippy::not_unsafe_ptr_arg_deref
)]
#[path = "../src/generated.rs"]
mod generated;
#[allow(missing_docs, unused_imports)]
#[path = "../src/glue.rs"]
mod glue;
// Not `#[path]` on the module itself: its generated children (models/*.rs) are found
// next to it only when it is loaded as a plain file module, as in the library.
#[allow(dead_code, missing_docs, unused_imports)]
#[path = "../src"]
mod src {
    pub mod models;
}
use src::models;
#[allow(
    dead_code,
    missing_docs,
    unused_imports,
    clippy::not_unsafe_ptr_arg_deref
)]
#[path = "../src/view.rs"]
mod view;

use client::*;
use error::roomchat_result;
use generated::*;
use models::*;

fn main() {
    let n = roomchat_emulator::bench::calls_from_env(4000);
    let emulator = roomchat_emulator::bench::unthrottled_emulator(50);
    let key = emulator.private_key();

    let core = Client::builder(key.clone())
        .base_url(emulator.base_url())
        .rate_limit(RateLimitConfig::new(u32::MAX, Duration::from_secs(60)))
        .build()
        .expect("client builds");

    let c_key = CString::new(key).unwrap();
    let c_url = CString::new(emulator.base_url()).unwrap();
    let mut options = ptr::null_mut();
    assert_eq!(
        roomchat_client_options_new(c_key.as_ptr(), &mut options, ptr::null_mut()),
        roomchat_result::Ok
    );
    roomchat_client_options_set_base_url(options, c_url.as_ptr());
    roomchat_client_options_set_rate_limit(options, u32::MAX, 60_000, false, 60_000);
    let mut c_client = ptr::null_mut();
    assert_eq!(
        roomchat_client_new(options, &mut c_client, ptr::null_mut()),
        roomchat_result::Ok
    );
    roomchat_client_options_free(options);

    let via_core = || {
        let page = core
            .list_users(&ListUsers::page(20, 0))
            .expect("list users");
        let names: usize = page
            .data
            .iter()
            .map(|u| u.username.as_deref().map_or(0, str::len))
            .sum();
        assert!(names > 0);
    };
    let via_c = || {
        let mut page = ptr::null_mut();
        let mut err = ptr::null_mut();
        assert_eq!(
            roomchat_client_list_users(c_client, 20, 0, &mut page, &mut err),
            roomchat_result::Ok
        );
        let mut names = 0;
        for i in 0..roomchat_user_page_len(page) {
            let name = roomchat_user_username(roomchat_user_page_get(page, i));
            names += unsafe { CStr::from_ptr(name) }.to_bytes().len();
        }
        assert!(names > 0);
        roomchat_user_page_free(page);
    };
    // Idle, then with one busy-loop process per core beside it (a quarter of the calls).
    roomchat_emulator::bench::idle_and_loaded(n, (n / 4).max(200), |label, n| {
        let comparison = roomchat_emulator::bench::compare(n, 20, &via_c, &via_core);
        comparison.print(
            &format!("list_users against the embedded emulator, {label},"),
            "C API",
            "core",
            1.05,
        );
    });
    roomchat_client_free(c_client);
}
