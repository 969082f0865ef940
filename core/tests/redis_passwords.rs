//! A Redis password holding `?`, `#` or `/` written as is in the URL (issue 37,
//! item 8): the user information ends at the URL's last `@`, so the password
//! reaches a real redis-server whole (percent-encoded for the redis crate) and
//! is shown nowhere. The redaction itself is pinned in `fuzz_regressions.rs`.
#![cfg(all(feature = "redis", target_os = "linux"))]

mod common;

use common::redis_server::RedisServer;
use common::*;
use roomchat::{BudgetBackend, ListUsers, OnRedisError, RedisBudget};

#[test]
fn a_password_holding_a_question_mark_hash_or_slash_reaches_redis_whole() {
    let emu = emulator("redis-special-password");
    emu.seed_users(1);
    let password = "S3cr?t#9/x@y";
    let redis = RedisServer::start(Some(password));
    let url = format!("redis://:{password}@127.0.0.1:{}/1", redis.port);
    let budget = RedisBudget::new(&url).on_error(OnRedisError::FailClosed);
    assert_eq!(
        budget.redacted_url(),
        format!("redis://REDACTED@127.0.0.1:{}/1", redis.port)
    );
    assert!(!format!("{budget:?}").contains("S3cr"));
    let client = builder(&emu).redis_budget(budget).build().unwrap();
    client.list_users(&ListUsers::page(1, 0)).unwrap();
    let state = client.rate_limit_state();
    assert_eq!(
        (state.backend, state.degraded, state.used),
        (BudgetBackend::Redis, false, 1)
    );
    // Counted in db 1 of that server: the whole password was accepted.
    let keyspace = redis.bulk_reply(&["INFO", "keyspace"]).unwrap();
    assert!(keyspace.contains("db1:keys="), "{keyspace}");
}
