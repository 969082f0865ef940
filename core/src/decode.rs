//! The models' `Deserialize`, written out: one pass over each object, known
//! fields straight into typed slots, only unknown ones into `extra`.
//!
//! Derived with `#[serde(flatten)]`, serde buffers every field of the object
//! (and, for a page, every user in it) into an intermediate tree before
//! sorting the fields out, so a decoded page cost about twice a plain
//! `serde_json::Value`; here it costs less than one.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value};

use crate::models::{CreatedUser, Deactivated, Message, MessageAuthor, User, UserPage};

/// A field name, borrowed from the input unless it had escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Keeps a field the model does not name.
fn keep<'de, A: MapAccess<'de>>(
    extra: &mut Map<String, Value>,
    key: Key<'de>,
    map: &mut A,
) -> Result<(), A::Error> {
    let value: Value = map.next_value()?;
    extra.insert(key.0.into_owned(), value);
    Ok(())
}

/// `Deserialize` for a model whose fields are all optional (`Default` fills what is absent).
macro_rules! optional_fields {
    ($model:ident, $what:literal, { $($wire:literal => $field:ident),* $(,)? }) => {
        impl<'de> Deserialize<'de> for $model {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct ModelVisitor;
                impl<'de> Visitor<'de> for ModelVisitor {
                    type Value = $model;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<$model, A::Error> {
                        let mut out = $model::default();
                        while let Some(key) = map.next_key::<Key<'de>>()? {
                            match key.0.as_ref() {
                                $($wire => out.$field = map.next_value()?,)*
                                _ => keep(&mut out.extra, key, &mut map)?,
                            }
                        }
                        Ok(out)
                    }
                }
                deserializer.deserialize_map(ModelVisitor)
            }
        }
    };
}

optional_fields!(User, "a user object", {
    "_id" => id,
    "userId" => user_id,
    "username" => username,
    "profilePic" => profile_pic,
    "email" => email,
    "uniqueUserIdentifier" => unique_user_identifier,
    "isModerator" => is_moderator,
    "chatRoom" => chat_room,
});

optional_fields!(MessageAuthor, "a message author object", {
    "_id" => id,
    "username" => username,
    "email" => email,
    "uniqueUserIdentifier" => unique_user_identifier,
});

optional_fields!(Message, "a message record", {
    "_id" => id,
    "conversation" => conversation,
    "messages" => text,
    "created" => created,
    "user" => user,
});

optional_fields!(Deactivated, "a deactivate answer", {
    "success" => success,
    "message" => message,
});

/// A required field that was absent.
fn missing<E: de::Error>(field: &'static str) -> E {
    E::missing_field(field)
}

impl<'de> Deserialize<'de> for UserPage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PageVisitor;
        impl<'de> Visitor<'de> for PageVisitor {
            type Value = UserPage;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a users page object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<UserPage, A::Error> {
                let (mut total, mut limit, mut skip, mut data) = (None, None, None, None);
                let mut extra = Map::new();
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    match key.0.as_ref() {
                        "total" => total = Some(map.next_value()?),
                        "limit" => limit = Some(map.next_value()?),
                        "skip" => skip = Some(map.next_value()?),
                        "data" => data = Some(map.next_value()?),
                        _ => keep(&mut extra, key, &mut map)?,
                    }
                }
                Ok(UserPage {
                    total: total.ok_or_else(|| missing("total"))?,
                    limit: limit.ok_or_else(|| missing("limit"))?,
                    skip: skip.ok_or_else(|| missing("skip"))?,
                    data: data.ok_or_else(|| missing("data"))?,
                    extra,
                })
            }
        }
        deserializer.deserialize_map(PageVisitor)
    }
}

impl<'de> Deserialize<'de> for CreatedUser {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CreatedVisitor;
        impl<'de> Visitor<'de> for CreatedVisitor {
            type Value = CreatedUser;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a created user object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CreatedUser, A::Error> {
                let (mut access_token, mut user_id) = (None, None);
                let mut out = CreatedUser::default();
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    match key.0.as_ref() {
                        "accessToken" => access_token = Some(map.next_value()?),
                        "userId" => user_id = Some(map.next_value()?),
                        "username" => out.username = map.next_value()?,
                        "isModerator" => out.is_moderator = map.next_value()?,
                        "chatRoom" => out.chat_room = map.next_value()?,
                        _ => keep(&mut out.extra, key, &mut map)?,
                    }
                }
                out.access_token = access_token.ok_or_else(|| missing("accessToken"))?;
                out.user_id = user_id.ok_or_else(|| missing("userId"))?;
                Ok(out)
            }
        }
        deserializer.deserialize_map(CreatedVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn known_fields_are_typed_and_the_rest_kept() {
        let page: UserPage = serde_json::from_str(
            r#"{"total": 2, "limit": 50, "skip": 0, "next": "x", "data": [
                {"_id": "u1", "username": "jon", "isModerator": null, "created": "t", "deactivated": false},
                {"userId": "u2", "username": "a\u0301nn", "profile\u0050ic": "p"}]}"#,
        )
        .unwrap();
        assert_eq!(
            page.extra,
            json!({"next": "x"}).as_object().unwrap().clone()
        );
        assert_eq!(page.data[0].id(), Some("u1"));
        assert_eq!(page.data[0].is_moderator, None);
        assert_eq!(page.data[0].extra.len(), 2);
        assert_eq!(page.data[1].id(), Some("u2"));
        assert_eq!(page.data[1].username.as_deref(), Some("a\u{301}nn"));
        // An escaped field name is still recognised.
        assert_eq!(page.data[1].profile_pic.as_deref(), Some("p"));
    }

    #[test]
    fn wrong_types_and_missing_fields_are_errors() {
        assert!(serde_json::from_str::<User>(r#"{"username": 5}"#).is_err());
        assert!(serde_json::from_str::<User>(r#"[]"#).is_err());
        let e =
            serde_json::from_str::<UserPage>(r#"{"total": 1, "limit": 1, "skip": 0}"#).unwrap_err();
        assert!(e.to_string().contains("data"), "{e}");
        let e = serde_json::from_str::<CreatedUser>(r#"{"accessToken": "t"}"#).unwrap_err();
        assert!(e.to_string().contains("userId"), "{e}");
        let m: Vec<Message> = serde_json::from_str(
            r#"[{"_id": "m", "messages": "hi", "user": {"_id": "u", "email": "e", "x": 1}, "y": [1]}]"#,
        )
        .unwrap();
        assert_eq!(m[0].text.as_deref(), Some("hi"));
        assert_eq!(m[0].user.as_ref().unwrap().extra["x"], 1);
        assert_eq!(m[0].extra["y"], json!([1]));
    }
}
