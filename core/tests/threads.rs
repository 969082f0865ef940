//! No thread is made per call: counted exactly, by interposing `pthread_create`
//! in this test binary (its own process: nothing else runs in it), with a
//! control showing the count sees the threads a default ureq agent makes.
#![cfg(target_os = "linux")]

mod common;

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use common::*;
use roomchat::ListUsers;

static THREADS_MADE: AtomicUsize = AtomicUsize::new(0);

type PthreadCreate = unsafe extern "C" fn(
    *mut libc::pthread_t,
    *const libc::pthread_attr_t,
    extern "C" fn(*mut c_void) -> *mut c_void,
    *mut c_void,
) -> c_int;

/// Every thread of this process goes through here (std's `thread::spawn`
/// calls `pthread_create`, which the executable's own definition overrides),
/// then on to the C library's.
///
/// # Safety
/// The same contract as `pthread_create(3)`.
#[no_mangle]
pub unsafe extern "C" fn pthread_create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: extern "C" fn(*mut c_void) -> *mut c_void,
    arg: *mut c_void,
) -> c_int {
    static REAL: OnceLock<usize> = OnceLock::new();
    let real = *REAL.get_or_init(|| {
        // SAFETY: looking up the next definition of a libc symbol by its NUL-terminated name.
        unsafe { libc::dlsym(libc::RTLD_NEXT, c"pthread_create".as_ptr()) as usize }
    });
    assert_ne!(real, 0, "the C library's pthread_create was not found");
    THREADS_MADE.fetch_add(1, Ordering::SeqCst);
    // SAFETY: `real` is libc's pthread_create, which has this signature.
    let real: PthreadCreate = unsafe { std::mem::transmute(real) };
    unsafe { real(thread, attr, start, arg) }
}

fn threads_made_by(f: impl FnOnce()) -> usize {
    let before = THREADS_MADE.load(Ordering::SeqCst);
    f();
    THREADS_MADE.load(Ordering::SeqCst) - before
}

#[test]
fn a_thousand_calls_make_no_thread() {
    // More than the service's 600 a minute are made here.
    let emu = emulator_with("threads", |c| {
        c.rate_limit = roomchat_emulator::RateLimit {
            requests: 100_000,
            window: Duration::from_secs(60),
        }
    });
    emu.seed_users(5);
    let url = format!(
        "{}/consumer/api/v2/users?auth={}&limit=5",
        emu.base_url(),
        emu.private_key()
    );

    // The control: a ureq agent as the client used to have it (default resolver, a timeout set).
    let default_agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into();
    let control = threads_made_by(|| {
        for _ in 0..100 {
            default_agent.get(&url).call().unwrap();
        }
    });
    assert!(
        control >= 100,
        "the count must see the default resolver's threads: {control}"
    );

    let client = client(&emu);
    client.list_users(&ListUsers::page(5, 0)).unwrap(); // connect once
    let made = threads_made_by(|| {
        for _ in 0..1000 {
            assert_eq!(
                client
                    .list_users(&ListUsers::page(5, 0))
                    .unwrap()
                    .data
                    .len(),
                5
            );
        }
    });
    figure(format_args!("threads made: {control} by 100 calls of a default ureq agent, {made} by 1000 calls of the client"));
    assert_eq!(made, 0, "the client made {made} threads in 1000 calls");
}
