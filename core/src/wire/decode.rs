//! The models' `Deserialize`, written out: one pass over each object, known
//! fields straight into typed slots, only unknown ones into `extra`. The
//! models and the fields each reads are declared (`api/operations.toml`,
//! `[[model]]`): the generated `wire/models/records.rs` calls the macros here
//! ([`decode_model!`], [`view_serialize!`], [`owned_slots!`]) with them.
//!
//! Derived with `#[serde(flatten)]`, serde buffers every field of the object
//! (and, for a page, every user in it) into an intermediate tree before
//! sorting the fields out, so a decoded page cost about twice a plain
//! `serde_json::Value`; here it costs less than one.
//!
//! The borrowed views ([`crate::wire::view`]) are decoded by the same macros from
//! the same field lists, so a view and its model cannot disagree on a name, a
//! type or a required field.

use std::borrow::Cow;
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::wire::view::{RawFields, UserView};

/// Text borrowed from the input unless it had escapes (a field name, or a
/// view's text).
pub(crate) struct Key<'de>(pub(crate) Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
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

/// A known field's slot: how its value is read. Owned slots read themselves;
/// a view's text borrows.
pub(crate) trait Slot<'de>: Sized {
    /// What is read from the input.
    type Wire: Deserialize<'de>;
    fn from_wire(wire: Self::Wire) -> Self;
}

/// `Slot` for types that read themselves (the models' field types).
macro_rules! owned_slots {
    ($($slot:ty),* $(,)?) => {$(
        impl<'de> $crate::wire::decode::Slot<'de> for $slot {
            type Wire = $slot;
            fn from_wire(wire: $slot) -> $slot {
                wire
            }
        }
    )*};
}
pub(crate) use owned_slots;

impl<'de> Slot<'de> for Option<Cow<'de, str>> {
    type Wire = Option<Key<'de>>;
    fn from_wire(wire: Option<Key<'de>>) -> Self {
        wire.map(|text| text.0)
    }
}

impl<'de> Slot<'de> for Vec<UserView<'de>> {
    type Wire = ViewList<'de>;
    fn from_wire(wire: ViewList<'de>) -> Self {
        wire.0
    }
}

/// A page's users as views, in a list sized for a usual page up front: JSON
/// does not say how long an array is, and growing a list of views from
/// nothing moved about 60 of them (200 bytes each) per page.
pub(crate) struct ViewList<'de>(Vec<UserView<'de>>);

/// Views a page's list starts with room for (the listing's default page is 50).
const VIEWS_PER_PAGE: usize = 64;

impl<'de> Deserialize<'de> for ViewList<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ListVisitor;
        impl<'de> Visitor<'de> for ListVisitor {
            type Value = ViewList<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of user objects")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<ViewList<'de>, A::Error> {
                let mut users = Vec::with_capacity(
                    seq.size_hint()
                        .unwrap_or(VIEWS_PER_PAGE)
                        .min(VIEWS_PER_PAGE),
                );
                while let Some(user) = seq.next_element()? {
                    users.push(user);
                }
                Ok(ViewList(users))
            }
        }
        deserializer.deserialize_seq(ListVisitor)
    }
}

/// Reads the next value into a known field.
pub(crate) fn read<'de, T: Slot<'de>, A: MapAccess<'de>>(map: &mut A) -> Result<T, A::Error> {
    map.next_value::<T::Wire>().map(T::from_wire)
}

/// Where a model keeps the fields it does not name.
pub(crate) trait Unknown<'de> {
    fn keep<A: MapAccess<'de>>(&mut self, key: Key<'de>, map: &mut A) -> Result<(), A::Error>;
}

/// A model keeps them as values (sorted by name; a name sent twice keeps the last).
impl<'de> Unknown<'de> for Map<String, Value> {
    fn keep<A: MapAccess<'de>>(&mut self, key: Key<'de>, map: &mut A) -> Result<(), A::Error> {
        let value: Value = map.next_value()?;
        self.insert(key.0.into_owned(), value);
        Ok(())
    }
}

/// A view keeps them as raw JSON text, in order, once checked as the model
/// would read them.
impl<'de> Unknown<'de> for RawFields<'de> {
    fn keep<A: MapAccess<'de>>(&mut self, key: Key<'de>, map: &mut A) -> Result<(), A::Error> {
        let value: &'de RawValue = map.next_value()?;
        serde_json::from_str::<Readable>(value.get()).map_err(de::Error::custom)?;
        self.push((key.0, value));
        Ok(())
    }
}

/// Any JSON value a [`Value`] can hold, read without keeping it: a raw field
/// fails where the model's field would (a lone surrogate in an escape, a
/// number out of `f64`'s range), which skipping over it does not check.
struct Readable;

impl<'de> Deserialize<'de> for Readable {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ReadableVisitor;
        impl<'de> Visitor<'de> for ReadableVisitor {
            type Value = Readable;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Readable, E> {
                Ok(Readable)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Readable, E> {
                Ok(Readable)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Readable, E> {
                Ok(Readable)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Readable, E> {
                Ok(Readable)
            }
            fn visit_str<E>(self, _: &str) -> Result<Readable, E> {
                Ok(Readable)
            }
            fn visit_unit<E>(self) -> Result<Readable, E> {
                Ok(Readable)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Readable, A::Error> {
                while seq.next_element::<Readable>()?.is_some() {}
                Ok(Readable)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Readable, A::Error> {
                while map.next_entry::<Readable, Readable>()?.is_some() {}
                Ok(Readable)
            }
        }
        deserializer.deserialize_any(ReadableVisitor)
    }
}

/// `Deserialize` for a model (or its view, naming its lifetime `'de`), from
/// its fields: `"wire" => field: required|optional [via Reader]`. A required
/// field that is absent is an error (checked in the order declared); an
/// optional one keeps the model's `Default`; a field sent twice keeps the
/// last; `via` reads the field through another type's `Deserialize` (its `.0`).
macro_rules! decode_model {
    ($model:ident $(<$lt:lifetime>)?, $what:literal, {
        $($wire:literal => $field:ident: $how:ident $(via $via:ty)?),* $(,)?
    }) => {
        impl<'de> ::serde::Deserialize<'de> for $model $(<$lt>)? {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct ModelVisitor;
                impl<'de> ::serde::de::Visitor<'de> for ModelVisitor {
                    type Value = $model $(<$lt>)?;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_map<A: ::serde::de::MapAccess<'de>>(
                        self,
                        mut map: A,
                    ) -> Result<Self::Value, A::Error> {
                        use $crate::wire::decode::Unknown as _;
                        let mut out = <Self::Value>::default();
                        $(let mut $field = None;)*
                        while let Some(key) = map.next_key::<$crate::wire::decode::Key<'de>>()? {
                            match key.0.as_ref() {
                                $($wire => $field = Some($crate::wire::decode::decode_model!(@read map $($via)?)),)*
                                _ => out.extra.keep(key, &mut map)?,
                            }
                        }
                        $($crate::wire::decode::decode_model!(@set out.$field, $field, $wire, $how);)*
                        Ok(out)
                    }
                }
                deserializer.deserialize_map(ModelVisitor)
            }
        }
    };
    (@read $map:ident) => { $crate::wire::decode::read(&mut $map)? };
    (@read $map:ident $via:ty) => { $map.next_value::<$via>()?.0 };
    (@set $out:ident.$field:ident, $slot:ident, $wire:literal, required) => {
        $out.$field = $slot.ok_or_else(|| <A::Error as ::serde::de::Error>::missing_field($wire))?;
    };
    (@set $out:ident.$field:ident, $slot:ident, $wire:literal, optional) => {
        if let Some(value) = $slot {
            $out.$field = value;
        }
    };
}
pub(crate) use decode_model;

/// `Serialize` for a view, from its model's fields: the known fields (an
/// optional one when present) under their wire names, then the raw fields as
/// they came: what the model's derive writes.
macro_rules! view_serialize {
    ($model:ident<$lt:lifetime>, $what:literal, {
        $($wire:literal => $field:ident: $how:ident $(via $via:ty)?),* $(,)?
    }) => {
        impl ::serde::Serialize for $model<'_> {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use ::serde::ser::SerializeMap as _;
                let mut map = serializer.serialize_map(None)?;
                $($crate::wire::decode::view_serialize!(@write map, self.$field, $wire, $how);)*
                for (name, value) in &self.extra {
                    map.serialize_entry(name, value)?;
                }
                map.end()
            }
        }
    };
    (@write $map:ident, $self:ident.$field:ident, $wire:literal, required) => {
        $map.serialize_entry($wire, &$self.$field)?;
    };
    (@write $map:ident, $self:ident.$field:ident, $wire:literal, optional) => {
        if let Some(value) = &$self.$field {
            $map.serialize_entry($wire, value)?;
        }
    };
}
pub(crate) use view_serialize;

/// `iat`: seconds since the Unix epoch (a whole or fractional number), or `null`.
pub(crate) struct EpochSeconds(pub(crate) Option<SystemTime>);

impl<'de> Deserialize<'de> for EpochSeconds {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SecondsVisitor;
        impl<'de> Visitor<'de> for SecondsVisitor {
            type Value = EpochSeconds;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("seconds since the Unix epoch (a number of at least 0)")
            }
            fn visit_u64<E: de::Error>(self, seconds: u64) -> Result<EpochSeconds, E> {
                UNIX_EPOCH
                    .checked_add(Duration::from_secs(seconds))
                    .map(|t| EpochSeconds(Some(t)))
                    .ok_or_else(|| E::custom("iat is too far in the future to be a time"))
            }
            fn visit_i64<E: de::Error>(self, seconds: i64) -> Result<EpochSeconds, E> {
                match u64::try_from(seconds) {
                    Ok(seconds) => self.visit_u64(seconds),
                    Err(_) => Err(E::invalid_value(de::Unexpected::Signed(seconds), &self)),
                }
            }
            fn visit_f64<E: de::Error>(self, seconds: f64) -> Result<EpochSeconds, E> {
                if seconds.is_nan() || seconds < 0.0 {
                    return Err(E::invalid_value(de::Unexpected::Float(seconds), &self));
                }
                Duration::try_from_secs_f64(seconds)
                    .ok()
                    .and_then(|d| UNIX_EPOCH.checked_add(d))
                    .map(|t| EpochSeconds(Some(t)))
                    .ok_or_else(|| E::custom("iat is too far in the future to be a time"))
            }
            fn visit_unit<E: de::Error>(self) -> Result<EpochSeconds, E> {
                Ok(EpochSeconds(None))
            }
        }
        deserializer.deserialize_any(SecondsVisitor)
    }
}

/// A field the pages type loosely ("number or string"): its text, a number
/// written as JSON writes it (`7` → `"7"`), or none for null.
pub(crate) struct TextOrNumber(pub(crate) Option<String>);

impl<'de> Deserialize<'de> for TextOrNumber {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextOrNumberVisitor;
        impl<'de> Visitor<'de> for TextOrNumberVisitor {
            type Value = TextOrNumber;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a number")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<TextOrNumber, E> {
                Ok(TextOrNumber(Some(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<TextOrNumber, E> {
                Ok(TextOrNumber(Some(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<TextOrNumber, E> {
                Ok(TextOrNumber(Some(v.to_string())))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<TextOrNumber, E> {
                Ok(TextOrNumber(Some(v.to_string())))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<TextOrNumber, E> {
                Ok(TextOrNumber(Some(
                    serde_json::Number::from_f64(v)
                        .map_or_else(|| v.to_string(), |n| n.to_string()),
                )))
            }
            fn visit_unit<E: de::Error>(self) -> Result<TextOrNumber, E> {
                Ok(TextOrNumber(None))
            }
        }
        deserializer.deserialize_any(TextOrNumberVisitor)
    }
}

/// A time as the service writes `iat` (the inverse of [`EpochSeconds`]):
/// seconds since the Unix epoch, whole when it is a whole second.
pub(crate) fn write_epoch_seconds<S: serde::Serializer>(
    time: &Option<SystemTime>,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    let since = time
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .unwrap_or_default();
    if since.subsec_nanos() == 0 {
        serializer.serialize_u64(since.as_secs())
    } else {
        serializer.serialize_f64(since.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::models::{CreatedUser, Message, User, UserPage};
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

    /// Decodes `body` as a model and as a view: both succeed with the same
    /// fields, or both fail with the same error.
    fn view_agrees(body: &str) -> std::result::Result<Value, String> {
        let response = crate::wire::WireResponse::new(200, vec![], body.as_bytes().to_vec());
        let model = crate::wire::decode_list_users(&response);
        let view = crate::wire::decode_list_users_view(&response);
        match (model, view) {
            (Ok(model), Ok(view)) => {
                let (model, view) = (
                    serde_json::to_value(&model).unwrap(),
                    serde_json::to_value(&view).unwrap(),
                );
                assert_eq!(view, model, "{body}");
                Ok(view)
            }
            (Err(model), Err(view)) => {
                assert_eq!(view.to_string(), model.to_string(), "{body}");
                assert_eq!(view.kind(), model.kind(), "{body}");
                Err(view.to_string())
            }
            (model, view) => panic!("{body}: model {model:?}, view {view:?}"),
        }
    }

    #[test]
    fn views_decode_as_the_model() {
        let page = view_agrees(
            r#"{"total": 3, "limit": 50, "skip": 0, "next": {"a": [1, 2.5, null]}, "data": [
                {"_id": "u1", "username": "jo\"n\\ \u00e9\ud83d\ude00", "isModerator": null, "created": "t", "n": -1.5e3},
                {"userId": "u2", "profile\u0050ic": "p", "email": null, "chatRoom": "r", "isModerator": true,
                 "x": 1, "x": 2, "username": "a", "username": "b"},
                {"big": 123456789012345678901234567890, "deep": [{"a": [true, false, null, "\ud83d\ude00"]}]}]}"#,
        )
        .unwrap();
        assert_eq!(page["data"][0]["username"], "jo\"n\\ \u{e9}\u{1F600}");
        assert_eq!(page["data"][1]["x"], 2, "a name sent twice keeps the last");
        assert_eq!(page["data"][1]["username"], "b");
        assert_eq!(page["data"][1]["profilePic"], "p");

        // Borrowed where nothing was escaped; the raw fields in order.
        let body = r#"{"total": 1, "limit": 1, "skip": 0, "data": [{"_id": "u1", "username": "a\nb", "z": [1], "a": {}}]}"#;
        let response = crate::wire::WireResponse::new(200, vec![], body.as_bytes().to_vec());
        let view = crate::wire::decode_list_users_view(&response).unwrap();
        let user = &view.data[0];
        assert!(matches!(user.id, Some(Cow::Borrowed("u1"))));
        assert!(matches!(user.username.as_deref(), Some("a\nb")));
        assert!(matches!(user.username, Some(Cow::Owned(_))));
        let raw: Vec<_> = user
            .extra
            .iter()
            .map(|(k, v)| (k.as_ref(), v.get()))
            .collect();
        assert_eq!(raw, [("z", "[1]"), ("a", "{}")]);

        // A page that says it failed, and one that says it did not.
        let failed = view_agrees(
            r#"{"total": 0, "limit": 1, "skip": 0, "data": [], "success": false, "message": "no"}"#,
        );
        assert!(failed.unwrap_err().contains("no"));
        // Whitespace around the raw `false`.
        let spaced =
            "{\"total\": 0, \"limit\": 1, \"skip\": 0, \"data\": [], \"success\" :\n false\t}";
        assert!(view_agrees(spaced).is_err());
        view_agrees(
            r#"{"total": 0, "limit": 1, "skip": 0, "data": [], "success": false, "success": true}"#,
        )
        .unwrap();
        view_agrees(r#"{"total": 0, "limit": 1, "skip": 0, "data": [], "success": true}"#).unwrap();

        // Wrong types, missing fields, broken JSON, bad escapes.
        for bad in [
            r#"{"total": 1, "limit": 1, "skip": 0, "data": [{"username": 5}]}"#,
            r#"{"total": 1, "limit": 1, "skip": 0, "data": [{"isModerator": "yes"}]}"#,
            r#"{"total": -1, "limit": 1, "skip": 0, "data": []}"#,
            r#"{"total": 1, "limit": 1, "skip": 0}"#,
            r#"{"total": 1, "limit": 1, "skip": 0, "data": [{"username": "\ud800"}]}"#,
            r#"{"total": 1, "limit": 1, "skip": 0, "data": [{"x": {"y": ["\udc00"]}}]}"#,
            r#"{"total": 1, "limit": 1, "skip": 0, "data": [{"\ud800": 1}]}"#,
            r#"{"total": 1, "limit": 1, "skip": 0, "data": [{"x": [1e400]}]}"#,
            r#"{"total": 1, "limit": 1, "skip": 0, "data": [], "x": {"\udfff": 1}}"#,
            r#"{"total": 1, "limit": 1, "skip": 0, "data": [{"x": tru}]}"#,
            r#"{"total": 1, "limit": 1, "skip": 0, "data": {}}"#,
            r#"[]"#,
            "",
        ] {
            assert!(view_agrees(bad).is_err(), "{bad}");
        }
    }
}
