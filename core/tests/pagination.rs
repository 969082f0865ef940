//! Lazy pagination over 1,000+ users.

mod common;

use std::collections::HashSet;

use common::*;
use roomchat::{CancelToken, CreateUser, DeactivateUser, ErrorKind, ListUsers};
use roomchat_emulator::FaultAction;

#[test]
fn iterates_over_every_user_once_fetching_lazily() {
    let emu = emulator_with("paginate", |c| c.seed_users = 1_234);
    let client = client(&emu);

    let mut users = client.users();
    assert!(
        emu.journal().is_empty(),
        "nothing is fetched before the first next()"
    );
    let first = users.next().unwrap().unwrap();
    assert_eq!(first.username.as_deref(), Some("seed-user-1"));
    assert_eq!(arrivals(&emu, "GET", USERS), 1);

    let rest: Vec<_> = users.map(Result::unwrap).collect();
    assert_eq!(rest.len(), 1_233);
    let ids: HashSet<_> = rest
        .iter()
        .filter_map(|u| u.id())
        .chain(first.id())
        .collect();
    assert_eq!(ids.len(), 1_234);
    assert_eq!(arrivals(&emu, "GET", USERS), 7, "ceil(1234 / 200) pages");
    assert_eq!(
        rest.last().unwrap().username.as_deref(),
        Some("seed-user-1234")
    );

    let pages: Vec<_> = client
        .user_pages(500.min(roomchat::MAX_PAGE_SIZE))
        .map(Result::unwrap)
        .collect();
    assert_eq!(pages.len(), 7);
    assert!(pages.iter().all(|p| p.total == 1_234 && p.limit == 200));
    assert_eq!(pages[6].skip, 1_200);
    assert_eq!(pages[6].data.len(), 34);
}

#[test]
fn small_pages_and_an_empty_account() {
    let emu = emulator("paginate_small");
    let client = client(&emu);
    assert_eq!(client.users().count(), 0);
    assert_eq!(arrivals(&emu, "GET", USERS), 1);
    emu.seed_users(10);
    let names: Vec<_> = client
        .users_with_page_size(3)
        .map(|u| u.unwrap().username.unwrap())
        .collect();
    assert_eq!(names.len(), 10);
    assert_eq!(names[9], "seed-user-10");
}

#[test]
fn copes_with_users_added_and_removed_while_it_runs() {
    let emu = emulator_with("paginate_churn", |c| c.seed_users = 100);
    let client = client(&emu);
    let mut seen = HashSet::new();
    let mut users = client.users_with_page_size(10);
    let mut ended = false;
    for i in 0..1_000 {
        let Some(user) = users.next() else {
            ended = true;
            break;
        };
        let user = user.unwrap();
        assert!(
            seen.insert(user.id().unwrap().to_owned()),
            "a user was yielded twice"
        );
        if i == 15 {
            // Remove users already seen (shifts later pages back) and add new ones.
            for victim in client.list_users(&ListUsers::page(5, 0)).unwrap().data {
                client
                    .deactivate_user(&DeactivateUser::UserId(victim.id().unwrap().into()))
                    .unwrap();
            }
            for n in 0..7 {
                client
                    .create_user(&CreateUser::regular(format!("late-{n}")))
                    .unwrap();
            }
        }
    }
    assert!(ended, "it ends");
    // Offset paging skips the users that removals shift behind the cursor (5 here):
    // every other user, the late ones included, is seen exactly once.
    assert!(seen.len() >= 100 - 5 + 7 - 5, "saw {}", seen.len());
}

#[test]
fn an_error_ends_nothing_the_next_step_fetches_the_page_again() {
    let emu = emulator_with("paginate_error", |c| c.seed_users = 30);
    let client = builder(&emu).max_retries(0).build().unwrap();
    let mut users = client.users_with_page_size(10);
    for _ in 0..10 {
        users.next().unwrap().unwrap();
    }
    emu.add_fault(once("GET", USERS, FaultAction::NotJson));
    let error = users.next().unwrap().unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Decode);
    assert_eq!(
        users.map(Result::unwrap).count(),
        20,
        "the next step fetched the page that failed"
    );

    let mut pages = client.user_pages(10);
    pages.next().unwrap().unwrap();
    emu.add_fault(once("GET", USERS, FaultAction::NotJson));
    assert_eq!(pages.next().unwrap().unwrap_err().kind(), ErrorKind::Decode);
    assert_eq!(pages.next_skip(), 10);
    let skips: Vec<_> = pages.map(|p| p.unwrap().skip).collect();
    assert_eq!(skips, [10, 20]);

    // A page size no retry can mend: its validation error is yielded once, then
    // the iteration ends (a `.flatten()` over it ends instead of spinning).
    let mut bad = client.users_with_page_size(0);
    assert_eq!(
        bad.next().unwrap().unwrap_err().kind(),
        ErrorKind::Validation
    );
    assert!(bad.next().is_none());
    assert_eq!(client.users_with_page_size(201).flatten().count(), 0);
}

#[test]
fn a_cancelled_step_cancels_that_step_only() {
    let emu = emulator_with("paginate_cancel", |c| c.seed_users = 30);
    let client = builder(&emu).max_retries(0).build().unwrap();
    let mut users = client.users_with_page_size(10);
    let mut pages = client.user_pages(10);
    let token = CancelToken::new();
    token.cancel();
    for _ in 0..10 {
        users.next().unwrap().unwrap();
    }
    pages.next().unwrap().unwrap();
    let before = arrivals(&emu, "GET", USERS);
    assert_eq!(
        users.next_with_cancel(&token).unwrap().unwrap_err().kind(),
        ErrorKind::Cancelled
    );
    assert_eq!(
        pages.next_with_cancel(&token).unwrap().unwrap_err().kind(),
        ErrorKind::Cancelled
    );
    assert_eq!(arrivals(&emu, "GET", USERS), before, "nothing was sent");
    // A fresh token per step, as the bindings' async iterators use.
    let fresh = CancelToken::new();
    assert_eq!(
        users
            .next_with_cancel(&fresh)
            .unwrap()
            .unwrap()
            .username
            .as_deref(),
        Some("seed-user-11")
    );
    assert_eq!(users.map(Result::unwrap).count(), 19);
    assert_eq!(pages.next_with_cancel(&fresh).unwrap().unwrap().skip, 10);
    assert_eq!(pages.next().unwrap().unwrap().skip, 20);
    assert!(pages.next().is_none());
}
