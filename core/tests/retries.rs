//! The retry rules, proven with the emulator's request journal.

mod common;

use std::time::{Duration, Instant};

use common::*;
use roomchat::wire::{Operation, RetryClass};
use roomchat::{
    Client, CreateBot, CreateChannel, CreateChatRoom, CreateUser, CreateUserV2, DeactivateUser,
    ErrorKind, ListMembers, ListUsers, RoomMessages, SendRoomMessage,
};
use roomchat_emulator::{Emulator, FaultAction};
use serde_json::json;

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
    // The service did create the user once its delay ended (polled: a state, not a
    // guessed duration): a retry would have made a second one.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let total = loop {
        let total = client.list_users(&ListUsers::default()).unwrap().total;
        if total != 0 || std::time::Instant::now() > deadline {
            break total;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(total, 1);
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

// ---- retries by class: the fault matrix -------------------------------------------------
//
// The retry rule follows an operation's declared class (`retry` in api/operations.toml),
// not its name or its method: every operation of a class below meets the same faults and
// the journal counts what reached the emulator.

/// A call of one operation, its answer dropped.
type Call = Box<dyn Fn(&Client) -> roomchat::Result<()>>;

/// An operation called on targets of its own (a round makes fresh rooms and names).
struct Case {
    name: &'static str,
    method: &'static str,
    path: String,
    call: Call,
}

fn case(
    name: &'static str,
    method: &'static str,
    path: String,
    call: impl Fn(&Client) -> roomchat::Result<()> + 'static,
) -> Case {
    Case {
        name,
        method,
        path,
        call: Box::new(call),
    }
}

/// Repeatable operations, of several methods, on round `round`'s own room and user.
fn repeatable_cases(emu: &Emulator, round: usize) -> Vec<Case> {
    let room = format!("rep-{round}");
    emu.create_room(json!({"roomId": room, "name": "r"}));
    let gone = format!("gone-{round}");
    emu.create_room(json!({"roomId": gone, "name": "g"}));
    let uid = format!("rep-user-{round}");
    client(emu)
        .create_user(&CreateUser::regular("u").field("uniqueUserIdentifier", uid.as_str()))
        .unwrap();
    let (r1, r2, r3, r4, u) = (room.clone(), room.clone(), room.clone(), gone.clone(), uid);
    vec![
        case(
            "get_chat_room",
            "GET",
            format!("/consumer/api/v1/chatroom/{room}"),
            move |c| c.get_chat_room(&r1).map(drop),
        ),
        case(
            "list_members",
            "GET",
            format!("/consumer/api/v2/room/{room}/members"),
            move |c| c.list_members(&r2, &ListMembers::new()).map(drop),
        ),
        case(
            "set_member",
            "POST",
            format!("/consumer/api/v2/room/{room}/member"),
            move |c| c.set_member(&r3, &u, "moderator").map(drop),
        ),
        case(
            "turn_chat_off",
            "POST",
            format!("/consumer/api/v1/chatRoom/{room}/off"),
            {
                let room = room.clone();
                move |c| c.turn_chat_off(&room).map(drop)
            },
        ),
        case(
            "delete_chat_room",
            "DELETE",
            format!("/consumer/api/v1/chatroom/{gone}"),
            move |c| c.delete_chat_room(&r4).map(drop),
        ),
    ]
}

/// Operations that are never repeated, on round `round`'s own room and names.
fn never_cases(emu: &Emulator, round: usize) -> Vec<Case> {
    let room = format!("never-{round}");
    emu.create_room(json!({"roomId": room, "name": "n"}));
    let (r1, r2) = (room.clone(), room.clone());
    vec![
        case(
            "send_room_message",
            "POST",
            format!("/consumer/api/v1/chatroom/{room}/message"),
            move |c| {
                c.send_room_message(&r1, "once", &SendRoomMessage::new().system_message(true))
                    .map(drop)
            },
        ),
        case(
            "create_channel",
            "POST",
            format!("/consumer/api/v1/chatroom/{room}/channel"),
            move |c| c.create_channel(&r2, "c", &CreateChannel::new()).map(drop),
        ),
        case(
            "create_chat_room",
            "POST",
            "/consumer/api/v1/chatroom".into(),
            move |c| {
                c.create_chat_room(&CreateChatRoom::new().name(format!("n-{round}")))
                    .map(drop)
            },
        ),
        case(
            "create_bot",
            "POST",
            "/consumer/api/v2/bot".into(),
            move |c| {
                c.create_bot(
                    &format!("bot-{round}"),
                    "https://hooks.example.com/b",
                    &CreateBot::new(),
                )
                .map(drop)
            },
        ),
        case(
            "create_user_v2",
            "POST",
            "/consumer/api/v2/user".into(),
            move |c| {
                c.create_user_v2(&format!("v2-{round}"), "v", &CreateUserV2::new())
                    .map(drop)
            },
        ),
    ]
}

fn class_of(case: &Case) -> RetryClass {
    Operation::from_name(case.name)
        .unwrap()
        .spec()
        .unwrap()
        .retry
}

/// A 503 (nothing done) and a connection dropped before any answer byte.
fn faults() -> [(&'static str, FaultAction, ErrorKind); 2] {
    [
        ("503", respond(503, "", &[]), ErrorKind::ServerError),
        (
            "dropped connection",
            FaultAction::CloseConnection,
            ErrorKind::Connection,
        ),
    ]
}

#[test]
fn repeatable_operations_are_sent_again_after_a_503_and_a_dropped_connection() {
    let emu = emulator("class_repeatable");
    let client = client(&emu);
    for (round, (fault, action, _)) in faults().into_iter().enumerate() {
        for case in repeatable_cases(&emu, round) {
            assert_eq!(class_of(&case), RetryClass::Repeatable, "{}", case.name);
            emu.clear_journal();
            emu.add_fault(once(case.method, &case.path, action.clone()));
            (case.call)(&client).unwrap_or_else(|e| panic!("{} after a {fault}: {e}", case.name));
            assert_eq!(
                arrivals(&emu, case.method, &case.path),
                2,
                "{} after a {fault}",
                case.name
            );
        }
    }
}

#[test]
fn never_operations_are_sent_once_after_a_503_or_a_dropped_connection_unless_opted_in() {
    let emu = emulator("class_never");
    let client = client(&emu);
    let opted_in = builder(&emu).retry_non_idempotent(true).build().unwrap();
    for (round, (fault, action, kind)) in faults().into_iter().enumerate() {
        for case in never_cases(&emu, round) {
            assert_eq!(class_of(&case), RetryClass::Never, "{}", case.name);
            emu.clear_journal();
            emu.add_fault(once(case.method, &case.path, action.clone()));
            let e = (case.call)(&client).unwrap_err();
            assert_eq!(e.kind(), kind, "{} after a {fault}: {e}", case.name);
            assert_eq!(
                arrivals(&emu, case.method, &case.path),
                1,
                "{} after a {fault}",
                case.name
            );
        }
        // The caller's opt-in: the same faults, sent again.
        for case in never_cases(&emu, round + 10) {
            emu.clear_journal();
            emu.add_fault(once(case.method, &case.path, action.clone()));
            (case.call)(&opted_in)
                .unwrap_or_else(|e| panic!("{} opted in, after a {fault}: {e}", case.name));
            assert_eq!(
                arrivals(&emu, case.method, &case.path),
                2,
                "{} opted in, after a {fault}",
                case.name
            );
        }
    }
}

#[test]
fn after_a_lost_answer_a_post_happened_once_and_a_repeated_delete_meets_not_found() {
    // The emulator does the request, then holds its answer past the client's timeout.
    let emu = emulator("class_lost_answer");
    let hasty = builder(&emu)
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let lost = || FaultAction::Delay(Duration::from_millis(700));

    let never = never_cases(&emu, 0);
    let post = &never[0];
    emu.add_fault(once(post.method, &post.path, lost()));
    assert_eq!((post.call)(&hasty).unwrap_err().kind(), ErrorKind::Timeout);
    assert_eq!(arrivals(&emu, post.method, &post.path), 1);
    let posted = hasty
        .room_messages("never-0", &RoomMessages::new())
        .unwrap()
        .total_records;
    assert_eq!(posted, Some(1), "posted once, not twice");

    let repeatable = repeatable_cases(&emu, 0);
    let upsert = &repeatable[2];
    emu.add_fault(once(upsert.method, &upsert.path, lost()));
    (upsert.call)(&hasty).unwrap();
    assert_eq!(arrivals(&emu, upsert.method, &upsert.path), 2);
    // A delete whose answer was lost is sent again, and meets the room it deleted
    // gone: the caller sees NotFound (documented on delete_chat_room).
    let delete = &repeatable[4];
    emu.add_fault(once(delete.method, &delete.path, lost()));
    assert_eq!(
        (delete.call)(&hasty).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert_eq!(arrivals(&emu, delete.method, &delete.path), 2);
    std::thread::sleep(Duration::from_millis(450)); // the held answers, before the emulator stops
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
