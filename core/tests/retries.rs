//! The retry rules, proven with the emulator's request journal.

mod common;

use std::time::{Duration, Instant};

use common::*;
use roomchat::{CreateUser, DeactivateUser, ErrorKind, ListUsers};
use roomchat_emulator::FaultAction;

const EVENT_500: &str = r#"{"message":"Internal server error occurred","eventId":"ev-1"}"#;

#[test]
fn a_post_is_never_sent_twice_after_a_500() {
    let emu = emulator("post_500");
    let client = client(&emu);
    emu.add_fault(once("POST", CREATE, respond(500, EVENT_500, &[])));
    let e = client.create_user(&CreateUser::regular("jon")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ServerError);
    assert_eq!(arrivals(&emu, "POST", CREATE), 1);
}

#[test]
fn a_post_is_never_sent_twice_after_a_timeout() {
    let emu = emulator("post_timeout");
    let client = builder(&emu)
        .timeout(Duration::from_millis(400))
        .build()
        .unwrap();
    emu.add_fault(once(
        "POST",
        CREATE,
        FaultAction::Delay(Duration::from_millis(1500)),
    ));
    let e = client.create_user(&CreateUser::regular("jon")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert_eq!(arrivals(&emu, "POST", CREATE), 1);
    // The service did create the user: a retry would have made a second one.
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(client.list_users(&ListUsers::default()).unwrap().total, 1);
}

#[test]
fn a_post_is_not_resent_after_the_connection_dropped_mid_request() {
    let emu = emulator("post_close");
    let client = client(&emu);
    emu.add_fault(once("POST", CREATE, FaultAction::CloseConnection));
    let e = client.create_user(&CreateUser::regular("jon")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Connection);
    assert_eq!(arrivals(&emu, "POST", CREATE), 1);
}

#[test]
fn a_post_is_retried_after_a_429_and_when_the_caller_opts_in() {
    let emu = emulator("post_429");
    let client = client(&emu);
    emu.add_fault(once(
        "POST",
        CREATE,
        respond(429, "", &[("Retry-After", "0")]),
    ));
    client.create_user(&CreateUser::regular("jon")).unwrap();
    assert_eq!(
        arrivals(&emu, "POST", CREATE),
        2,
        "a 429 was not processed, so it is safe to resend"
    );

    let opted_in = builder(&emu).retry_non_idempotent(true).build().unwrap();
    emu.add_fault(once("POST", CREATE, respond(503, "", &[])));
    opted_in.create_user(&CreateUser::regular("ann")).unwrap();
    assert_eq!(arrivals(&emu, "POST", CREATE), 4);
}

#[test]
fn a_get_is_retried_and_succeeds() {
    let emu = emulator("get_retry");
    let client = client(&emu);
    for action in [
        respond(500, EVENT_500, &[]),
        respond(502, "<html>bad gateway</html>", &[]),
        respond(503, "", &[]),
        respond(504, "", &[]),
        FaultAction::CloseConnection,
    ] {
        emu.clear_journal();
        emu.add_fault(once("GET", USERS, action.clone()));
        client
            .list_users(&ListUsers::default())
            .unwrap_or_else(|e| panic!("{action:?}: {e}"));
        assert_eq!(arrivals(&emu, "GET", USERS), 2, "{action:?}");
    }
    // a read timeout, then success
    emu.clear_journal();
    let hasty = builder(&emu)
        .timeout(Duration::from_millis(400))
        .build()
        .unwrap();
    emu.add_fault(once(
        "GET",
        USERS,
        FaultAction::Delay(Duration::from_millis(1000)),
    ));
    hasty.list_users(&ListUsers::default()).unwrap();
    assert_eq!(arrivals(&emu, "GET", USERS), 2);
}

#[test]
fn retries_stop_at_the_maximum() {
    let emu = emulator("max_retries");
    let client = builder(&emu).max_retries(3).build().unwrap();
    emu.add_fault(roomchat_emulator::Fault {
        times: 10,
        ..once("GET", USERS, respond(503, "", &[]))
    });
    let e = client.list_users(&ListUsers::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ServerError);
    assert_eq!(arrivals(&emu, "GET", USERS), 4, "1 attempt + 3 retries");

    let none = builder(&emu).max_retries(0).build().unwrap();
    emu.clear_journal();
    none.list_users(&ListUsers::default()).unwrap_err();
    assert_eq!(arrivals(&emu, "GET", USERS), 1);
}

#[test]
fn delete_is_retried_after_a_5xx() {
    let emu = emulator("delete_retry");
    let client = client(&emu);
    let jon = client.create_user(&CreateUser::regular("jon")).unwrap();
    emu.add_fault(once("DELETE", DEACTIVATE, respond(500, EVENT_500, &[])));
    client
        .deactivate_user(&DeactivateUser::UserId(jon.user_id))
        .unwrap();
    assert_eq!(arrivals(&emu, "DELETE", DEACTIVATE), 2);
}

#[test]
fn retry_after_is_honoured_in_seconds_and_as_a_date() {
    let emu = emulator("retry_after");
    let client = client(&emu);
    emu.add_fault(once(
        "GET",
        USERS,
        respond(503, "", &[("Retry-After", "1")]),
    ));
    let started = Instant::now();
    client.list_users(&ListUsers::default()).unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "waited {:?}",
        started.elapsed()
    );

    // An HTTP date two seconds ahead (whole seconds: the wait is 1 to 2 s).
    let at = std::time::SystemTime::now() + Duration::from_secs(2);
    let date = httpdate(at);
    emu.add_fault(once(
        "GET",
        USERS,
        respond(503, "", &[("Retry-After", date.as_str())]),
    ));
    let started = Instant::now();
    client.list_users(&ListUsers::default()).unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "waited {:?} for {date}",
        started.elapsed()
    );
}

/// IMF-fixdate, for the test only.
fn httpdate(t: std::time::SystemTime) -> String {
    let secs = t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    // civil_from_days (Howard Hinnant)
    let z = days as i64 + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][(days % 7) as usize];
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ][(mo - 1) as usize];
    format!("{weekday}, {d:02} {month} {y} {h:02}:{m:02}:{s:02} GMT")
}
