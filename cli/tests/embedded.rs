//! The command line embedded in a program (`roomchat_cli::run`, which the
//! Python package's `roomchat._cli:main` and the npm package's `cliMain` call):
//! Ctrl-C is caught for a command's duration only, and the program's own
//! SIGINT handler is back when the command returns, however often it runs
//! (issue 44, item 13). One test in this binary: signal dispositions belong to
//! the whole process.
#![cfg(unix)]

use std::ffi::OsString;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use roomchat_emulator::{Emulator, EmulatorConfig, Fault, FaultAction};

/// SIGINTs the program's own handler received.
static PROGRAMS_HANDLER_RAN: AtomicUsize = AtomicUsize::new(0);

extern "C" fn programs_handler(_: libc::c_int) {
    PROGRAMS_HANDLER_RAN.fetch_add(1, Ordering::SeqCst);
}

/// The handler SIGINT has now.
fn sigint_handler() -> libc::sighandler_t {
    // SAFETY: queries the action only.
    unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        assert_eq!(
            libc::sigaction(libc::SIGINT, std::ptr::null(), &mut current),
            0
        );
        current.sa_sigaction
    }
}

fn run(args: &[&str]) -> i32 {
    roomchat_cli::run(
        std::iter::once("roomchat")
            .chain(args.iter().copied())
            .map(OsString::from),
    )
}

fn raise_sigint() {
    // SAFETY: sends SIGINT to this process.
    assert_eq!(unsafe { libc::kill(libc::getpid(), libc::SIGINT) }, 0);
}

#[test]
fn the_programs_sigint_handler_is_back_after_each_command_and_ctrl_c_during_one_is_the_commands() {
    let emu = Emulator::start(EmulatorConfig::default()).unwrap();
    emu.create_room(serde_json::json!({"roomId": "r1", "name": "General"}));
    emu.seed_messages("r1", None, 30);
    std::env::set_var("ROOMCHAT_PRIVATE_KEY", emu.private_key());
    std::env::set_var("ROOMCHAT_BASE_URL", emu.base_url());
    std::env::set_var(
        "XDG_CONFIG_HOME",
        std::env::temp_dir().join("roomchat-embedded-none"),
    );
    std::env::set_var("NO_PROXY", "*");

    // The program's own handler, as Python's or Node's runtime installs one.
    // SAFETY: a handler that only touches an atomic.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = programs_handler as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::sigemptyset(&mut action.sa_mask);
        assert_eq!(
            libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut()),
            0
        );
    }
    let programs = sigint_handler();

    // Twice: each command catches Ctrl-C while it runs (--all does), and gives it back.
    for round in 1..=2 {
        let listed = [
            "room-messages",
            "r1",
            "--all",
            "--page-size",
            "10",
            "--output",
            "jsonl",
        ];
        assert_eq!(run(&listed), 0);
        assert_eq!(
            sigint_handler(),
            programs,
            "round {round}: the program's handler is not back"
        );
        raise_sigint();
        let deadline = Instant::now() + Duration::from_secs(5);
        while PROGRAMS_HANDLER_RAN.load(Ordering::SeqCst) < round && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(
            PROGRAMS_HANDLER_RAN.load(Ordering::SeqCst),
            round,
            "round {round}"
        );
    }

    // Ctrl-C during a command is the command's: it stops (130, where to resume), and the
    // program's handler neither runs nor is lost.
    emu.add_fault(Fault {
        method: Some("GET".into()),
        path: "/consumer/api/v1/chatRoom/r1/messages".into(),
        times: 1,
        action: FaultAction::Delay(Duration::from_secs(3)),
    });
    let interrupter = std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(500));
        raise_sigint();
    });
    let started = Instant::now();
    let code = run(&["room-messages", "r1", "--all", "--output", "jsonl"]);
    interrupter.join().unwrap();
    assert_eq!(code, 130);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the call in flight was not cancelled"
    );
    assert_eq!(PROGRAMS_HANDLER_RAN.load(Ordering::SeqCst), 2);
    assert_eq!(sigint_handler(), programs);
    raise_sigint();
    let deadline = Instant::now() + Duration::from_secs(5);
    while PROGRAMS_HANDLER_RAN.load(Ordering::SeqCst) < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(PROGRAMS_HANDLER_RAN.load(Ordering::SeqCst), 3);
}
