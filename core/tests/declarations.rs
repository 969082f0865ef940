//! The operations' declarations (`api/operations.toml`, read by core as
//! `Operation::spec`): the generic builder checks what each declares, the
//! request a builder makes is the operation its declaration names, and a
//! request's retry class is its operation's.

use roomchat::wire::{self, Operation, OperationSpec, ParamKind, RetryClass, WireRequest};
use roomchat::{ErrorKind, RawAuth, RawRequest};
use serde_json::json;

fn build(name: &str, params: serde_json::Value) -> roomchat::Result<WireRequest> {
    Operation::parse(name)?.build(&params)
}

fn refused(name: &str, params: serde_json::Value) -> String {
    let error = build(name, params).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Validation, "{error}");
    error.message().to_owned()
}

/// The least params a declaration takes: each required one, and the first of
/// each exactly-one group, with a value of its type.
fn least_params(spec: &OperationSpec) -> serde_json::Value {
    let mut params = serde_json::Map::new();
    let needed = spec
        .params
        .iter()
        .filter(|p| p.required || spec.exactly_one.iter().any(|g| g.first() == Some(&p.name)));
    for p in needed {
        let value = match p.kind {
            ParamKind::Integer => json!(p.min.unwrap_or(0).max(1)),
            ParamKind::Boolean => json!(true),
            _ => json!(p.choices.first().copied().unwrap_or("x1")),
        };
        params.insert(p.name.to_owned(), value);
    }
    serde_json::Value::Object(params)
}

#[test]
fn every_operation_but_raw_is_declared_and_sent_as_itself() {
    for op in Operation::ALL {
        let Some(spec) = op.spec() else {
            assert_eq!(op, Operation::Raw);
            continue;
        };
        let name = op.name();
        assert_eq!(spec.name, name);
        // create_user's hand-written builder takes its older JSON form.
        let params = match op {
            Operation::CreateUser => json!({"username": "jon"}),
            _ => least_params(spec),
        };
        let request = op.build(&params).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(request.method, spec.method, "{name}");
        assert_eq!(request.auth, spec.auth, "{name}");
        assert!(spec.is_sent_as(&request.method, &request.path), "{name}");
        assert_eq!(Operation::sent_as(&request.method, &request.path), Some(op));
        assert_eq!(
            request.is_idempotent(),
            spec.retry == RetryClass::Repeatable,
            "{name}"
        );
    }
}

#[test]
fn the_generic_builder_checks_what_the_declaration_says() {
    // Types and limits.
    assert!(refused("list_users", json!({"limit": 0})).contains("between 1 and 200"));
    assert!(refused("list_users", json!({"limit": 201})).contains("between 1 and 200"));
    assert!(refused("list_users", json!({"skip": -1})).contains("whole number"));
    assert!(refused("list_users", json!({"limit": "5"})).contains("whole number"));
    // Unknown parameters, with what it takes.
    let unknown = refused("list_users", json!({"limt": 5}));
    assert!(
        unknown.contains("\"limt\"") && unknown.contains("limit, skip"),
        "{unknown}"
    );
    assert!(refused("list_chat_rooms", json!({"x": 1})).contains("takes none"));
    // Required, empty ids, choices.
    assert!(refused("validate_access_token", json!({})).contains("accessToken is required"));
    assert!(refused("invalidate_access_token", json!({"accessToken": ""})).contains("empty"));
    let form = refused(
        "conversation_messages",
        json!({"roomId": "r", "conversationId": "c", "pathForm": "Room"}),
    );
    assert!(form.contains("room, chatroom"), "{form}");
    // Exactly one of a group.
    assert!(refused("deactivate_user", json!({})).contains("exactly one"));
    assert!(refused(
        "reactivate_user",
        json!({"userId": "u", "uniqueUserIdentifier": "x"})
    )
    .contains("userId and uniqueUserIdentifier, not both"));
    // Not an object.
    assert!(refused("list_users", json!([1])).contains("must be an object"));

    // What it builds: path parameters in their own segment, encoded; the
    // declared default for a path choice; null is absent.
    let request = build(
        "conversation_messages",
        json!({"roomId": "../users", "conversationId": "..", "pathForm": null}),
    )
    .unwrap();
    assert_eq!(
        request.path,
        "/consumer/api/v2/room/..%2Fusers/conversation/%2E%2E/messages"
    );
    let validate = build("validate_access_token", json!({"accessToken": "t"})).unwrap();
    assert_eq!(validate.auth, RawAuth::PublicKey);
    assert_eq!(validate.body.as_deref(), Some(r#"{"accessToken":"t"}"#));
}

#[test]
fn a_requests_retry_class_is_its_operations() {
    // A POST that only reads is repeatable; POSTs that change something are not.
    let validate = wire::validate_access_token("t").unwrap();
    assert!(validate.is_idempotent());
    assert!(!wire::invalidate_access_token("t").unwrap().is_idempotent());
    // A raw request to a declared operation's path takes its class; any other
    // goes by its method.
    let raw = |method: &str, path: &str| {
        wire::raw(&RawRequest::new(method, path))
            .unwrap()
            .is_idempotent()
    };
    assert!(raw("POST", "/consumer/api/v1/user/accessToken/validate"));
    assert!(!raw("POST", "/consumer/api/v1/user"));
    assert!(!raw("POST", "/consumer/api/v1/upload"));
    assert!(raw("GET", "/consumer/api/v1/anything"));
    assert!(raw("DELETE", "/consumer/api/v1/anything"));
    // The casing is the declaration's: another casing is no declared operation.
    assert_eq!(
        Operation::sent_as("POST", "/consumer/api/v1/user/accesstoken/validate"),
        None
    );
}

/// A record field declared `secret = true` (an access token, a webhook URL) is
/// hidden by `Debug`, in the record and in the records that hold it (issue 37, item 9).
#[test]
fn secret_fields_are_hidden_from_debug() {
    let answer = |body: &str| wire::WireResponse::new(200, Vec::new(), body.as_bytes().to_vec());
    let token = "eyJhbGciOiJIUzI1NiJ9.secret-token-payload";
    let hook = "https://hooks.example/b?token=hook-secret-0123";
    let updated = wire::decode_update_user(&answer(&format!(
        r#"{{"accessToken":"{token}","userId":"u1","username":"sam"}}"#
    )))
    .unwrap();
    let provisioned = wire::decode_create_user_v2(&answer(&format!(
        r#"{{"success":true,"accessToken":"{token}","user":{{"username":"sam"}}}}"#
    )))
    .unwrap();
    let bots = wire::decode_list_bots(&answer(&format!(
        r#"{{"success":true,"bots":[{{"_id":"b1","name":"helper","webhookURL":"{hook}"}}]}}"#
    )))
    .unwrap();
    assert_eq!(updated.access_token.as_deref(), Some(token));
    assert_eq!(
        bots.bots.as_ref().unwrap()[0].webhook_url.as_deref(),
        Some(hook)
    );
    for shown in [
        format!("{updated:?}"),
        format!("{provisioned:?}"),
        format!("{bots:?}"),
        format!("{bots:#?}"),
    ] {
        assert!(
            !shown.contains("secret-token") && !shown.contains("hook-secret"),
            "{shown}"
        );
        assert!(shown.contains("[hidden: "), "{shown}");
    }
    assert!(format!("{updated:?}").contains(r#"username: Some("sam")"#));
}

/// An older operation's model declared with a secret (`[[model]]` `CreatedUser`'s
/// `accessToken`) keeps the `Debug` it was published with: the token by its length only.
#[test]
fn a_models_secret_is_shown_by_its_length_only() {
    let token = "eyJhbGciOiJIUzI1NiJ9.secret-token-payload";
    let answer = wire::WireResponse::new(
        200,
        Vec::new(),
        format!(r#"{{"accessToken":"{token}","userId":"u1","username":"sam","x":1}}"#).into_bytes(),
    );
    let created = wire::decode_create_user(&answer).unwrap();
    assert_eq!(created.access_token, token);
    for shown in [format!("{created:?}"), format!("{created:#?}")] {
        assert!(!shown.contains("secret-token"), "{shown}");
        assert!(
            shown.contains(&format!("<{} bytes>", token.len())),
            "{shown}"
        );
        assert!(shown.contains(r#"username: "sam""#), "{shown}");
    }
}

/// The older operations' types, generated from `[[model]]` and `[operation.rust]`
/// since 0.1.0, keep the shape 0.1.0 published (issue 46: "a user of 0.1.0 compiles
/// unchanged"): code that builds each with every field named, matches each enum
/// without a wildcard, and leans on each derive, as a 0.1.0 user may, still compiles;
/// and each model writes the wire names it wrote. A field or a variant added to a
/// declaration breaks such code, and this test with it.
#[test]
fn the_older_operations_types_keep_the_shape_0_1_0_published() {
    use std::fmt::Debug;
    use std::time::{Duration, SystemTime};

    use roomchat::view::{RawFields, UserPageView, UserView};
    use roomchat::{
        ConversationMessages, CreateUser, CreatedUser, DeactivateUser, Deactivated, Invalidated,
        ListUsers, Message, MessageAuthor, PathForm, ReactivateUser, Reactivated, Role, TokenUser,
        User, UserPage, MAX_PAGE_SIZE,
    };
    use serde::de::DeserializeOwned;
    use serde::Serialize;
    use serde_json::Map;

    fn model<
        T: Debug + Clone + PartialEq + Default + Serialize + DeserializeOwned + Send + Sync,
    >(
        value: T,
    ) -> serde_json::Value {
        serde_json::to_value(value).unwrap()
    }
    fn params<T: Debug + Clone + PartialEq + Eq + Send + Sync>(_: &T) {}
    fn copy_params<T: Debug + Copy + PartialEq + Eq + Default + Send + Sync>(_: T) {}
    fn view<'a, T: Debug + Clone + Default + Serialize + serde::Deserialize<'a>>(_: &T) {}
    let text = || Some("t".to_owned());
    let extra = || Map::from_iter([("x".to_owned(), json!(1))]);

    let user = User {
        id: text(),
        user_id: text(),
        username: text(),
        profile_pic: text(),
        email: text(),
        unique_user_identifier: text(),
        is_moderator: Some(true),
        chat_room: text(),
        extra: extra(),
    };
    assert_eq!(user.id(), Some("t"));
    let users = [
        "_id",
        "userId",
        "username",
        "profilePic",
        "email",
        "uniqueUserIdentifier",
        "chatRoom",
    ];
    let mut wire_user: serde_json::Map<_, _> =
        users.iter().map(|n| (n.to_string(), json!("t"))).collect();
    wire_user.insert("isModerator".into(), json!(true));
    wire_user.insert("x".into(), json!(1));
    assert_eq!(
        model(user.clone()),
        serde_json::Value::Object(wire_user.clone())
    );
    let page = UserPage {
        total: 1,
        limit: 2,
        skip: 3,
        data: vec![user],
        extra: extra(),
    };
    assert_eq!(
        model(page),
        json!({"total": 1, "limit": 2, "skip": 3, "data": [wire_user], "x": 1})
    );
    let author = MessageAuthor {
        id: text(),
        username: text(),
        email: text(),
        unique_user_identifier: text(),
        extra: extra(),
    };
    let message = Message {
        id: text(),
        conversation: text(),
        text: text(),
        created: text(),
        user: Some(author),
        extra: extra(),
    };
    assert_eq!(
        model(message),
        json!({"_id": "t", "conversation": "t", "messages": "t", "created": "t", "x": 1,
               "user": {"_id": "t", "username": "t", "email": "t", "uniqueUserIdentifier": "t", "x": 1}})
    );
    let created = CreatedUser {
        access_token: "a".into(),
        username: "u".into(),
        user_id: "i".into(),
        is_moderator: true,
        chat_room: None,
        extra: extra(),
    };
    assert_eq!(
        model(created),
        json!({"accessToken": "a", "username": "u", "userId": "i", "isModerator": true, "x": 1})
    );
    let deactivated = Deactivated {
        success: true,
        message: None,
        extra: extra(),
    };
    assert_eq!(
        model(deactivated),
        json!({"success": true, "message": null, "x": 1})
    );
    let reactivated = Reactivated {
        success: true,
        message: None,
        extra: extra(),
    };
    assert_eq!(
        model(reactivated),
        json!({"success": true, "message": null, "x": 1})
    );
    let invalidated = Invalidated {
        success: true,
        message: None,
        extra: extra(),
    };
    assert_eq!(model(invalidated), json!({"success": true, "x": 1}));
    let token_user = TokenUser {
        id: "i".into(),
        username: text(),
        chat_room: text(),
        is_moderator: Some(false),
        external_user_id: text(),
        created: text(),
        updated: text(),
        iat: Some(SystemTime::UNIX_EPOCH + Duration::from_millis(1_500)),
        extra: extra(),
    };
    assert_eq!(
        model(token_user),
        json!({"_id": "i", "username": "t", "chatRoom": "t", "isModerator": false,
               "externalUserId": "t", "created": "t", "updated": "t", "iat": 1.5, "x": 1})
    );

    let list = ListUsers {
        limit: Some(MAX_PAGE_SIZE),
        skip: Some(0),
    };
    copy_params(list);
    assert_eq!(ListUsers::page(MAX_PAGE_SIZE, 0), list);
    copy_params(PathForm::default());
    let messages = ConversationMessages {
        room_id: "r".into(),
        conversation_id: "c".into(),
        path_form: match PathForm::ChatRoom {
            PathForm::Room => PathForm::Room,
            PathForm::ChatRoom => PathForm::ChatRoom,
        },
    };
    params(&messages);
    assert_eq!(
        ConversationMessages::new("r", "c").path_form(PathForm::ChatRoom),
        messages
    );
    for by in [
        DeactivateUser::UserId("u".into()),
        DeactivateUser::UniqueUserIdentifier("u".into()),
    ] {
        params(&by);
        match by {
            DeactivateUser::UserId(id) | DeactivateUser::UniqueUserIdentifier(id) => {
                assert_eq!(id, "u")
            }
        }
    }
    for by in [
        ReactivateUser::UserId("u".into()),
        ReactivateUser::UniqueUserIdentifier("u".into()),
    ] {
        params(&by);
        match by {
            ReactivateUser::UserId(id) | ReactivateUser::UniqueUserIdentifier(id) => {
                assert_eq!(id, "u")
            }
        }
    }
    for role in [
        Role::Regular,
        Role::ModeratorOfAllRooms,
        Role::ModeratorOfRoom("r".into()),
    ] {
        params(&role);
        let create = CreateUser {
            username: "u".into(),
            role: role.clone(),
            extra: extra(),
        };
        let made = match &role {
            Role::Regular => CreateUser::regular("u"),
            Role::ModeratorOfAllRooms => CreateUser::moderator("u"),
            Role::ModeratorOfRoom(room) => CreateUser::room_moderator("u", room.as_str()),
        };
        assert_eq!(made.field("x", 1), create);
    }

    let user_view = UserView {
        id: None,
        user_id: None,
        username: None,
        profile_pic: None,
        email: None,
        unique_user_identifier: None,
        is_moderator: None,
        chat_room: None,
        extra: RawFields::new(),
    };
    view(&user_view);
    let page_view = UserPageView {
        total: 0,
        limit: 0,
        skip: 0,
        data: vec![user_view],
        extra: RawFields::new(),
    };
    view(&page_view);
    assert_eq!(
        serde_json::to_value(&page_view).unwrap(),
        json!({"total": 0, "limit": 0, "skip": 0, "data": [{}]})
    );
}
