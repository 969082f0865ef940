//! `api/operations.toml`, read and checked: the one description of every
//! operation that the generators turn into each language's surface.

use std::collections::{BTreeMap, HashSet};

use serde::de::DeserializeOwned;
use serde::Deserialize;

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Declarations {
    #[serde(rename = "operation")]
    pub operations: Vec<Operation>,
    #[serde(rename = "record", default)]
    pub records: Vec<Record>,
    /// The records of the operations older than the declarations, as
    /// published (`roomchat::User`, …): core's generator reads them.
    #[serde(rename = "model", default)]
    pub models: Vec<Model>,
}

/// A record of an older operation, under the name and shape it was published with.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    pub name: String,
    pub doc: String,
    /// What a decode error says it expected (`a user object`).
    pub what: String,
    /// The borrowed view decoded from the same fields (core's `wire::view`).
    pub view: Option<String>,
    /// The view's doc (its fields' are the model's).
    pub view_doc: Option<String>,
    /// The doc of `extra`.
    pub extra_doc: Option<String>,
    /// `[model.node]`: the JS object and TypeScript interface Node published,
    /// what the fields cannot say (JS names, docs); Node's generator reads it.
    #[serde(default)]
    pub node: Option<toml::Table>,
    pub fields: Vec<Field>,
    /// `[model.c]`: the opaque handle C published, what the fields cannot say
    /// (its docs, which accessors); C's generator (c_models.rs) reads it.
    #[serde(default)]
    pub c: Option<toml::Table>,
    /// `[model.python]`: the class Python published, what the fields cannot
    /// say (its docs, what `repr` and `hash` use); Python's generator reads it.
    #[serde(default)]
    pub python: Option<toml::Table>,
}

/// How the operations answer a model: alone (`UserPage`), as a JSON array
/// (`Vec<Message>`), both or neither (an item of another model).
#[derive(Debug, Clone, Copy)]
pub struct Answered {
    pub alone: bool,
    pub listed: bool,
}

impl Model {
    /// How the operations answer it.
    pub fn answered(&self, d: &Declarations) -> Answered {
        let answers: Vec<&str> = d.operations.iter().map(|op| op.result.as_str()).collect();
        Answered {
            alone: answers.contains(&self.name.as_str()),
            listed: answers.contains(&format!("Vec<{}>", self.name).as_str())
                || answers.contains(&format!("[{}]", self.name).as_str()),
        }
    }

    /// The doc of `extra`, the fields it does not name.
    pub fn extra_doc(&self) -> &str {
        self.extra_doc
            .as_deref()
            .unwrap_or("Every other field the service sent.")
    }
}

/// A typed record of an answer.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub name: String,
    pub doc: String,
    pub fields: Vec<Field>,
}

/// A field of a record.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Field {
    /// The wire name.
    pub name: String,
    /// string, boolean, integer, number, json, a record's name, or `[Record]`.
    #[serde(rename = "type")]
    pub kind: String,
    pub doc: String,
    /// The name in code, where the wire name made snake_case is not it.
    pub rust: Option<String>,
    /// True: a secret (an access token, a webhook URL): every language's debug
    /// output (Rust `Debug`, Python `repr`, Node `util.inspect`) hides its value.
    #[serde(default)]
    pub secret: bool,
    /// A model's field (`[[model]]`): optional (the default), required,
    /// defaulted or nullable.
    #[serde(default)]
    pub presence: Presence,
}

/// A language's table of an operation or a model (`[operation.c]`,
/// `[model.python]`, …) read as that language's generator types it (`None`
/// when there is none); `at` names the table in an error (an unknown key, a
/// value of the wrong type).
pub fn read_table<T: DeserializeOwned>(
    table: Option<&toml::Table>,
    at: &str,
) -> Result<Option<T>, String> {
    table
        .map(|t| t.clone().try_into().map_err(|e| format!("{at}: {e}")))
        .transpose()
}

impl Model {
    /// Where its language table `[model.<language>]` is, for an error.
    pub fn table_at(&self, language: &str) -> String {
        format!(
            "api/operations.toml, model {:?}, [model.{language}]",
            self.name
        )
    }
}

impl Operation {
    /// Where its language table `[operation.<language>]` is, for an error.
    pub fn table_at(&self, language: &str) -> String {
        format!(
            "api/operations.toml, operation {:?}, [operation.{language}]",
            self.name
        )
    }
}

impl Field {
    /// The field's name in Rust and Python (snake_case).
    pub fn snake(&self) -> String {
        self.rust.clone().unwrap_or_else(|| snake(&self.name))
    }

    /// The record a field holds (one or a list), if it holds one.
    pub fn record(&self) -> Option<&str> {
        let inner = self
            .kind
            .strip_prefix('[')
            .and_then(|k| k.strip_suffix(']'))
            .unwrap_or(&self.kind);
        inner
            .starts_with(|c: char| c.is_ascii_uppercase())
            .then_some(inner)
    }

    pub fn is_list(&self) -> bool {
        self.kind.starts_with('[')
    }

    /// Whether core holds a model's field as an `Option` (every field but a
    /// required or defaulted one): absent in every language's form of it.
    pub fn is_optional(&self) -> bool {
        match self.presence {
            Presence::Required | Presence::Defaulted => false,
            Presence::Optional | Presence::Nullable => true,
        }
    }
}

impl Record {
    /// Whether it carries the service's `success` flag.
    pub fn has_success(&self) -> bool {
        self.fields
            .iter()
            .any(|f| f.name == "success" && f.kind == "boolean")
    }
}

/// One operation.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Operation {
    pub name: String,
    pub summary: String,
    /// The family it belongs to (`Rooms`, `Users`, …): how the command line's
    /// help and the guides group operations; empty: none declared.
    #[serde(default)]
    pub family: String,
    pub method: String,
    pub path: String,
    #[serde(default)]
    pub auth: Auth,
    pub retry: Retry,
    pub result: String,
    #[serde(default)]
    pub pages: Pages,
    #[serde(default)]
    pub params: Vec<Param>,
    #[serde(default)]
    pub exactly_one: Vec<Vec<String>>,
    #[serde(default)]
    pub extra: bool,
    /// `hand-written`: core's JSON-params builder of this operation is written by hand.
    #[serde(default)]
    pub builder: Option<String>,
    /// Typed body fields beyond `params` that a hand-written builder takes
    /// inside its `extra` object (create user's `email`, …): the languages
    /// whose published shapes type them read them here.
    #[serde(default)]
    pub extra_fields: Vec<ExtraField>,
    /// The JSON params as a hand-written builder takes them, for the docs.
    #[serde(default)]
    pub json_params: Option<String>,
    /// The errors the service gives for this operation that a caller should
    /// know by kind, for every language's docs.
    #[serde(default)]
    pub errors: Vec<DeclaredError>,
    /// `[operation.enums.<key>]`: the enums an older operation's published
    /// params are made of (create user's role, which form of the path, which
    /// identifier names the user), read by every language's generator that
    /// publishes them; a language's own table adds only its own text.
    #[serde(default)]
    pub enums: BTreeMap<String, Choice>,
    /// Shapes of the eight operations that predate this file, which their
    /// published surfaces keep in that language (`[operation.c]` and so on):
    /// each language's generator reads its own table; a new operation has none.
    #[serde(default)]
    pub rust: Option<toml::Table>,
    #[serde(default)]
    pub c: Option<toml::Table>,
    #[serde(default)]
    pub python: Option<toml::Table>,
    #[serde(default)]
    pub node: Option<toml::Table>,
}

/// An enum of an older operation's published params (`[operation.enums.<key>]`).
/// It either gives `param` one of its variants' values, or (no `param`) picks
/// which param of the operation's one exactly_one group is sent, each variant
/// carrying that param's value (deactivate user's `UserId(id)`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Choice {
    /// snake_case, shared by the operations that use it: the one that gives
    /// `variants` defines it, the others name it only.
    pub name: String,
    /// The JSON param its variants' values give: a declared param, or a
    /// hand-written builder's (create user's `role`).
    pub param: Option<String>,
    /// What it is, as core's type doc says it (where core publishes it as an enum of its own).
    pub doc: Option<String>,
    #[serde(default)]
    pub variants: Vec<ChoiceVariant>,
}

/// A variant of a [`Choice`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChoiceVariant {
    /// PascalCase, as published.
    pub name: String,
    pub doc: String,
    /// The value it gives the enum's `param`.
    pub value: Option<String>,
    /// The (string) param the variant carries and sends, and only it: the
    /// picked param of an exactly_one group, or one a value takes along
    /// (`ModeratorOfRoom(chatRoom)`).
    pub carries: Option<String>,
}

impl Operation {
    /// The enum `key` of this operation, as the operation that defines it
    /// declares it (this one, or another when this one only names it); `None`
    /// when it has no such key or the enum is defined nowhere.
    pub fn choice<'a>(&'a self, key: &str, d: &'a Declarations) -> Option<&'a Choice> {
        let choice = self.enums.get(key)?;
        d.operations
            .iter()
            .flat_map(|op| op.enums.values())
            .find(|c| c.name == choice.name && !c.variants.is_empty())
    }
}

/// A typed body field sent inside a hand-written builder's `extra` object.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtraField {
    /// The wire name.
    pub name: String,
    #[serde(rename = "type")]
    pub kind: ExtraKind,
}

/// The type of an [`ExtraField`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExtraKind {
    String,
    Json,
}

impl ExtraKind {
    /// The param type of the same values.
    pub fn param_kind(self) -> ParamKind {
        match self {
            ExtraKind::String => ParamKind::String,
            ExtraKind::Json => ParamKind::Json,
        }
    }
}

/// An error an operation's docs name: its kind (core's `ErrorKind::as_str`) and when.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeclaredError {
    pub kind: String,
    pub when: String,
}

/// The error kinds an `errors` entry may name: those an answer of the service
/// is classified as (core's `ErrorKind::as_str`).
pub const DECLARED_ERROR_KINDS: [&str; 5] = [
    "not_found",
    "user_not_found",
    "invalid_request",
    "plan_upgrade_required",
    "validation",
];

/// How an operation authenticates (`auth`): the private key in the query's
/// `auth` (the default), or the public key in its `publicKey`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Auth {
    #[default]
    PrivateKey,
    PublicKey,
}

impl Auth {
    /// The sentence an operation's doc says of its key, in every language
    /// (`None` for the private key, every other call's): `Authenticated by the
    /// {key}{how}.`, with `key` the language's name of it (`public key`, C's
    /// `**public** key`, Node's `account's public key`) and `how` how it is
    /// given and what a call without it does (empty in the guides' tables).
    pub fn sentence(self, key: &str, how: &str) -> Option<String> {
        match self {
            Auth::PrivateKey => None,
            Auth::PublicKey => Some(format!("Authenticated by the {key}{how}.")),
        }
    }
}

/// Whether an operation is sent again after a failure that may have reached
/// the service (`retry`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Retry {
    /// Sent again after a 5xx, a timeout or a lost answer, as a GET is.
    Repeatable,
    /// A repeat could create or post twice: sent again only when nothing can
    /// have reached the service, or when the client allows it.
    Never,
}

/// What one language's doc says of a retry class where the languages' words
/// differ today (each generator's output is kept byte for byte; making them
/// agree changes every generated file, a task of its own).
#[derive(Debug, Clone, Copy)]
pub struct RetryWords<'a> {
    /// Whether the repeatable sentence opens with `Repeatable: ` (every
    /// language but Python).
    pub label: bool,
    /// The first word of the never sentence: `Never`, or Node's `Not`.
    pub never: &'a str,
    /// Whether the never sentence names the timeout among the failures
    /// (every language but Python).
    pub timeout: bool,
    /// What follows the failures up to the period: the opt-in (`unless …`)
    /// and the reason ([`Retry::REASON`]), in the language's order and
    /// punctuation.
    pub unless: &'a str,
}

impl Retry {
    /// The failures after which a repeatable operation is sent again.
    pub const AFTER: &'static str = "after a 5xx, a timeout or a lost answer";
    /// Why a `never` operation is not sent again.
    pub const REASON: &'static str = "(a repeat could do it twice)";

    /// As the declarations write it (`repeatable`), as OpenAPI's `x-retry`
    /// and the guides' tables show it.
    pub fn as_str(self) -> &'static str {
        match self {
            Retry::Repeatable => "repeatable",
            Retry::Never => "never",
        }
    }

    /// The sentence an operation's doc says of its retry class, in every
    /// language, with `words` what that language's differs by.
    pub fn sentence(self, words: RetryWords) -> String {
        match self {
            Retry::Repeatable => format!(
                "{}ent again {}, as a GET is.",
                if words.label { "Repeatable: s" } else { "S" },
                Self::AFTER
            ),
            Retry::Never => format!(
                "{} sent again {}{}.",
                words.never,
                if words.timeout {
                    Self::AFTER
                } else {
                    "after a 5xx or a lost answer"
                },
                words.unless
            ),
        }
    }
}

/// How a listing pages (`pages`): not at all, by `total`/`limit`/`skip`/`data`,
/// or by `totalRecords`/`count`/`limit`/`skip`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pages {
    #[default]
    None,
    Total,
    TotalRecords,
}

impl Pages {
    /// As the declarations write it (`total_records`).
    pub fn as_str(self) -> &'static str {
        match self {
            Pages::None => "none",
            Pages::Total => "total",
            Pages::TotalRecords => "total_records",
        }
    }
}

/// Whether a model's field is always there (`presence`): optional (the
/// default), required, defaulted (absent: its type's default) or nullable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Presence {
    #[default]
    Optional,
    Required,
    Defaulted,
    Nullable,
}

impl Presence {
    /// As the declarations write it (`defaulted`).
    pub fn as_str(self) -> &'static str {
        match self {
            Presence::Optional => "optional",
            Presence::Required => "required",
            Presence::Defaulted => "defaulted",
            Presence::Nullable => "nullable",
        }
    }
}

/// A param's `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamKind {
    String,
    /// A string that must not be empty.
    Id,
    Integer,
    Boolean,
    /// A boolean for the caller, sent as `"on"`/`"off"`.
    Switch,
    /// Any JSON value, sent as given.
    Json,
}

impl ParamKind {
    /// As the declarations write it (`switch`).
    pub fn as_str(self) -> &'static str {
        match self {
            ParamKind::String => "string",
            ParamKind::Id => "id",
            ParamKind::Integer => "integer",
            ParamKind::Boolean => "boolean",
            ParamKind::Switch => "switch",
            ParamKind::Json => "json",
        }
    }

    /// A string (`string` or `id`).
    pub fn is_text(self) -> bool {
        matches!(self, ParamKind::String | ParamKind::Id)
    }
}

/// Where a param is sent (`in`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Location {
    Path,
    Query,
    Body,
}

impl Location {
    /// As the declarations (and OpenAPI) write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Location::Path => "path",
            Location::Query => "query",
            Location::Body => "body",
        }
    }
}

/// One parameter.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Param {
    pub name: String,
    #[serde(rename = "in")]
    pub location: Location,
    #[serde(rename = "type")]
    pub kind: ParamKind,
    #[serde(default)]
    pub required: bool,
    pub min: Option<u64>,
    pub max: Option<u64>,
    pub max_len: Option<u64>,
    #[serde(default)]
    pub choices: Vec<String>,
    pub default: Option<toml::Value>,
}

impl Operation {
    /// `list_users` → `ListUsers`.
    pub fn type_name(&self) -> String {
        pascal(&self.name)
    }

    /// The record of the answer: `Room` for a `result` of `Room` or `[Room]`.
    pub fn result_record(&self) -> &str {
        self.result
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(']'))
            .unwrap_or(&self.result)
    }

    /// Whether the answer is a JSON array of `result_record()`s.
    pub fn result_is_list(&self) -> bool {
        self.result.starts_with('[')
    }

    /// The answer's type in Rust: `Vec<Room>` for `[Room]`, else `result` as written.
    pub fn rust_result(&self) -> String {
        if self.result_is_list() {
            format!("Vec<{}>", self.result_record())
        } else {
            self.result.clone()
        }
    }

    pub fn is_hand_written(&self) -> bool {
        self.builder.as_deref() == Some("hand-written")
    }

    /// Whether it is one of the operations older than the declarations, whose
    /// published shapes some language keeps (an `[operation.<language>]` table);
    /// a newer one's every surface follows from the declaration alone.
    pub fn is_older(&self) -> bool {
        self.rust.is_some() || self.c.is_some() || self.python.is_some() || self.node.is_some()
    }

    /// The parameters given by name (keywords, an options object, a params
    /// handle): those not in the path, and a path's optional ones (a form of
    /// the path with a default, as `pathForm`).
    pub fn named_params(&self) -> Vec<&Param> {
        self.params
            .iter()
            .filter(|p| p.location != Location::Path || !p.required)
            .collect()
    }

    /// The params a method takes one by one, in every language: the path's
    /// required params in the path's order, then the other required ones as
    /// declared. The rest are keywords, an options object or a params handle.
    pub fn argument_params(&self) -> Vec<&Param> {
        let mut params: Vec<&Param> = self
            .positional_params()
            .into_iter()
            .filter(|p| p.required)
            .collect();
        params.extend(
            self.params
                .iter()
                .filter(|p| p.required && p.location != Location::Path),
        );
        params
    }

    /// The path's parameters, as declared.
    pub fn positional_params(&self) -> Vec<&Param> {
        self.path_params()
            .into_iter()
            .filter_map(|name| self.params.iter().find(|p| p.name == name))
            .collect()
    }

    /// The names of the path's parameters, in order.
    pub fn path_params(&self) -> Vec<&str> {
        self.path
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .collect()
    }
}

impl Param {
    /// The declared bounds in words, for every generator's docs: `1 to 200`
    /// (or `at least 1`, `at most 200`), `at most 1000 characters`.
    pub fn bounds(&self) -> Vec<String> {
        let mut notes = Vec::new();
        match (self.min, self.max) {
            (Some(min), Some(max)) => notes.push(format!("{min} to {max}")),
            (Some(min), None) => notes.push(format!("at least {min}")),
            (None, Some(max)) => notes.push(format!("at most {max}")),
            (None, None) => {}
        }
        if let Some(max) = self.max_len {
            notes.push(format!("at most {max} characters"));
        }
        notes
    }

    /// Whether `default` is a value this param itself takes: of its type, within
    /// its limits and among its choices (`Err` says why not). Core checks a
    /// given value the same way (`ParamSpec::check`).
    fn check_default(&self, default: &toml::Value) -> Result<(), String> {
        let kind = self.kind;
        match (kind, default) {
            (ParamKind::String | ParamKind::Id, toml::Value::String(text)) => {
                if kind == ParamKind::Id && text.is_empty() {
                    return Err("\"\" is empty, and an id must not be".into());
                }
                if let Some(max) = self.max_len {
                    if text.chars().count() as u64 > max {
                        return Err(format!("{text:?} is longer than max_len {max}"));
                    }
                }
                if !self.choices.is_empty() && !self.choices.contains(text) {
                    return Err(format!(
                        "{text:?} is not one of its choices ({})",
                        self.choices.join(", ")
                    ));
                }
                Ok(())
            }
            (ParamKind::Integer, toml::Value::Integer(n)) => {
                let (min, max) = (self.min.unwrap_or(0), self.max.unwrap_or(u64::MAX));
                match u64::try_from(*n) {
                    Ok(n) if (min..=max).contains(&n) => Ok(()),
                    _ => Err(format!("{n} is outside {min} to {max}")),
                }
            }
            (ParamKind::Boolean | ParamKind::Switch, toml::Value::Boolean(_))
            | (ParamKind::Json, _) => Ok(()),
            (
                ParamKind::String
                | ParamKind::Id
                | ParamKind::Integer
                | ParamKind::Boolean
                | ParamKind::Switch,
                value,
            ) => {
                let kind = kind.as_str();
                Err(match value {
                    toml::Value::String(text) => format!("{text:?} is not of its type {kind}"),
                    toml::Value::Integer(n) => format!("{n} is not of its type {kind}"),
                    toml::Value::Boolean(b) => format!("{b} is not of its type {kind}"),
                    value => format!("{value:?} is not of its type {kind}"),
                })
            }
        }
    }

    /// The default as the text the docs show.
    pub fn default_text(&self) -> Option<String> {
        self.default.as_ref().map(|v| match v {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(n) => n.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            other => format!("{other:?}"),
        })
    }
}

/// `camelCase` (or `webhookURL`) → `snake_case` (`webhook_url`).
pub fn snake(camel: &str) -> String {
    let chars: Vec<char> = camel.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_ascii_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            let prev_upper = i > 0 && chars[i - 1].is_ascii_uppercase();
            if i > 0 && (prev_lower || (prev_upper && next_lower)) {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `snake_case` → `camelCase`.
#[allow(dead_code)] // the Node generator's
pub fn camel(snake: &str) -> String {
    let pascal = pascal(snake);
    let mut c = pascal.chars();
    c.next()
        .map(|f| f.to_ascii_lowercase().to_string() + c.as_str())
        .unwrap_or_default()
}

/// `snake_case` → `PascalCase`.
pub fn pascal(snake: &str) -> String {
    snake
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

impl Declarations {
    /// The wire names of the fields the items of `op`'s listing declare, in
    /// declaration order (the command line's CSV columns): the fields of the
    /// record of its page's one list of records; none when it does not page.
    pub fn item_fields(&self, op: &Operation) -> Result<Vec<String>, String> {
        Ok(self
            .page_list(op)?
            .map(|(_, fields)| fields)
            .unwrap_or_default())
    }

    /// The wire name of the one list of records in `op`'s page (`data`,
    /// `messages`): where a page's items are; empty when it does not page.
    pub fn items_field(&self, op: &Operation) -> Result<String, String> {
        Ok(self
            .page_list(op)?
            .map(|(name, _)| name)
            .unwrap_or_default())
    }

    /// The page's one list of records: its wire name and its items' fields.
    fn page_list(&self, op: &Operation) -> Result<Option<(String, Vec<String>)>, String> {
        if op.pages == Pages::None {
            return Ok(None);
        }
        let page = op.result_record();
        let at = |what: &str| {
            format!(
                "api/operations.toml, operation {:?} (pages {:?}, result {page:?}): {what}",
                op.name,
                op.pages.as_str()
            )
        };
        if let Some(model) = self.models.iter().find(|m| m.name == page) {
            // An older listing's page: the fields of its model's one list of models.
            let lists: Vec<(&str, &str)> = model
                .fields
                .iter()
                .filter(|f| f.is_list())
                .filter_map(|f| Some((f.name.as_str(), f.record()?)))
                .collect();
            let [(list, item)] = lists.as_slice() else {
                return Err(at("a page model has exactly one list of models"));
            };
            let item = self
                .models
                .iter()
                .find(|m| m.name == *item)
                .ok_or_else(|| at(&format!("no model {item:?}")))?;
            let fields = item.fields.iter().map(|f| f.name.clone()).collect();
            return Ok(Some(((*list).to_owned(), fields)));
        }
        let record = |name: &str| self.records.iter().find(|r| r.name == name);
        let page_record = record(page).ok_or_else(|| {
            at("a listing that pages answers a [[record]] (or an older listing's [[model]])")
        })?;
        let lists: Vec<(&str, &str)> = page_record
            .fields
            .iter()
            .filter(|f| f.is_list())
            .filter_map(|f| Some((f.name.as_str(), f.record()?)))
            .collect();
        let [(list, item)] = lists.as_slice() else {
            return Err(at("a page record has exactly one list of records"));
        };
        let item = record(item).ok_or_else(|| at(&format!("no record {item:?}")))?;
        let fields = item.fields.iter().map(|f| f.name.clone()).collect();
        Ok(Some(((*list).to_owned(), fields)))
    }
}

/// The plain types of a model's field; a record's are the first five.
const MODEL_TYPES: [&str; 8] = [
    "string",
    "boolean",
    "integer",
    "number",
    "json",
    "unsigned",
    "epoch_seconds",
    "text_or_number",
];

/// Checks a field of a record or a model: its name in code is its own, and
/// its type is one of `types` or (a list of) one of `holders`.
fn check_field(
    field: &Field,
    names: &mut HashSet<String>,
    holders: &HashSet<&str>,
    holder: &str,
    types: &[&str],
) -> Result<(), String> {
    if !names.insert(field.snake()) || field.snake() == "extra" {
        return Err("its name in code is taken".into());
    }
    match field.record() {
        Some(inner) if !holders.contains(inner) => Err(format!("no {holder} {inner:?}")),
        Some(_) => Ok(()),
        None if types.contains(&field.kind.as_str()) => Ok(()),
        None => Err(format!("type {:?}", field.kind)),
    }
}

/// Checks the models: names, types and presences the core generator can write.
fn check_models(declarations: &Declarations) -> Result<(), String> {
    let mut models = HashSet::new();
    for model in &declarations.models {
        if !models.insert(model.name.as_str()) {
            return Err(format!(
                "api/operations.toml: model {:?} declared twice",
                model.name
            ));
        }
    }
    for model in &declarations.models {
        let mut names = HashSet::new();
        for field in &model.fields {
            let at = format!(
                "api/operations.toml, model {:?}, field {:?}",
                model.name, field.name
            );
            check_field(field, &mut names, &models, "model", &MODEL_TYPES)
                .map_err(|why| format!("{at}: {why}"))?;
            if field.secret && (field.kind != "string" || field.presence == Presence::Optional) {
                return Err(format!(
                    "{at}: a model's secret is a string that is not optional"
                ));
            }
        }
    }
    Ok(())
}

/// Checks the older operations' enums: each defined once, its variants' values
/// among its param's choices, what a variant carries a string param of the
/// operation (of its exactly_one group, one variant per param, in order, for
/// an enum that picks).
fn check_enums(declarations: &Declarations) -> Result<(), String> {
    let mut defined = HashSet::new();
    for op in &declarations.operations {
        if !op.enums.is_empty() && !op.is_older() {
            return Err(format!(
                "api/operations.toml, operation {:?}: [operation.enums] is for an older operation's published params (a newer one's follow from its params)",
                op.name
            ));
        }
        for (key, choice) in &op.enums {
            let at = |what: String| {
                format!(
                    "api/operations.toml, operation {:?}, [operation.enums.{key}]: {what}",
                    op.name
                )
            };
            if choice.variants.is_empty() {
                if choice.param.is_some() || choice.doc.is_some() {
                    return Err(at(format!(
                        "an enum without variants names {:?}, defined by another operation: give only its name",
                        choice.name
                    )));
                }
            } else if !defined.insert(choice.name.as_str()) {
                return Err(at(format!("enum {:?} is defined twice", choice.name)));
            }
            let Some(choice) = op.choice(key, declarations) else {
                return Err(at(format!("enum {:?} is defined nowhere", choice.name)));
            };
            let variants = &choice.variants;
            let param = |name: &str| op.params.iter().find(|p| p.name == name);
            for v in variants {
                if let Some(carried) = &v.carries {
                    if !param(carried).is_some_and(|p| p.kind.is_text()) {
                        return Err(at(format!(
                            "variant {}: carries {carried:?}, not a string param",
                            v.name
                        )));
                    }
                }
            }
            match &choice.param {
                Some(name) => {
                    let declared = param(name);
                    if declared.is_none() && !op.is_hand_written() {
                        return Err(at(format!("param {name:?} is not declared")));
                    }
                    for v in variants {
                        let Some(value) = &v.value else {
                            return Err(at(format!("variant {} has no value", v.name)));
                        };
                        if declared
                            .is_some_and(|p| !p.choices.is_empty() && !p.choices.contains(value))
                        {
                            return Err(at(format!(
                                "variant {}: {value:?} is not a choice of {name}",
                                v.name
                            )));
                        }
                    }
                }
                None => {
                    let [group] = op.exactly_one.as_slice() else {
                        return Err(at(
                            "an enum without param picks the one exactly_one group".into()
                        ));
                    };
                    let carried: Vec<Option<&String>> =
                        variants.iter().map(|v| v.carries.as_ref()).collect();
                    if carried != group.iter().map(Some).collect::<Vec<_>>()
                        || variants.iter().any(|v| v.value.is_some())
                    {
                        return Err(at(
                            "each variant carries a param of the exactly_one group, in order (and has no value)".into(),
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// The error of declarations serde refused (a key's value none of those
/// allowed, a key unknown, one missing), naming the operation, model or record
/// it is in (`api/operations.toml, operation "x": unknown variant …, expected
/// one of …`), followed by the parser's own, which shows the line.
fn refused(text: &str, error: &toml::de::Error) -> String {
    let whole = format!("api/operations.toml: {error}");
    let Ok(table) = text.parse::<toml::Table>() else {
        return whole;
    };
    let name = |item: &toml::Table| {
        item.get("name")
            .and_then(toml::Value::as_str)
            .unwrap_or("(no name)")
            .to_owned()
    };
    let first = |key: &str, read: &dyn Fn(toml::Table) -> Option<String>| {
        table
            .get(key)
            .and_then(toml::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(toml::Value::as_table)
            .find_map(|item| {
                read(item.clone())
                    .map(|why| format!("api/operations.toml, {key} {:?}: {why}", name(item)))
            })
    };
    let why = |e: toml::de::Error| e.message().trim_end().to_owned();
    first("operation", &|t| t.try_into::<Operation>().err().map(why))
        .or_else(|| first("record", &|t| t.try_into::<Record>().err().map(why)))
        .or_else(|| first("model", &|t| t.try_into::<Model>().err().map(why)))
        .map(|named| format!("{named}\n{whole}"))
        .unwrap_or(whole)
}

/// Reads and checks the declarations: every mistake the generators would
/// otherwise turn into code that does not compile, or worse, that does.
pub fn load(text: &str) -> Result<Declarations, String> {
    let declarations: Declarations = toml::from_str(text).map_err(|e| refused(text, &e))?;
    let mut names = HashSet::new();
    for op in &declarations.operations {
        let at = |what: String| format!("api/operations.toml, operation {:?}: {what}", op.name);
        if !names.insert(op.name.as_str()) {
            return Err(at("declared twice".into()));
        }
        if op.name == "raw"
            || op.name.is_empty()
            || !op
                .name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            return Err(at("the name must be snake_case (and not `raw`)".into()));
        }
        if !matches!(op.method.as_str(), "GET" | "POST" | "PUT" | "DELETE") {
            return Err(at(format!("method {:?}", op.method)));
        }
        if !op.path.starts_with('/') || op.path.contains(['?', '#', ' ']) {
            return Err(at(format!("path {:?}", op.path)));
        }
        if let Some(builder) = &op.builder {
            if builder != "hand-written" {
                return Err(at(format!("builder {builder:?}")));
            }
        }
        let mut params = HashSet::new();
        for p in &op.params {
            if !params.insert(p.name.as_str()) {
                return Err(at(format!("param {:?} declared twice", p.name)));
            }
            let integer = p.kind == ParamKind::Integer;
            if (p.min.is_some() || p.max.is_some()) && !integer {
                return Err(at(format!("param {:?}: min/max are for integers", p.name)));
            }
            if (p.max_len.is_some() || !p.choices.is_empty()) && integer {
                return Err(at(format!(
                    "param {:?}: max_len/choices are for strings",
                    p.name
                )));
            }
            if p.location == Location::Path && !op.path.contains(&format!("{{{}}}", p.name)) {
                return Err(at(format!("path param {:?} is not in the path", p.name)));
            }
            if let Some(default) = &p.default {
                p.check_default(default)
                    .map_err(|why| at(format!("param {:?}: default {why}", p.name)))?;
            }
            if p.location == Location::Path && !p.required && p.default.is_none() {
                return Err(at(format!(
                    "path param {:?} needs required = true or a default",
                    p.name
                )));
            }
        }
        for name in op.path_params() {
            if !op
                .params
                .iter()
                .any(|p| p.name == name && p.location == Location::Path)
            {
                return Err(at(format!("the path's {{{name}}} is not a path param")));
            }
        }
        for error in &op.errors {
            if !DECLARED_ERROR_KINDS.contains(&error.kind.as_str()) {
                return Err(at(format!(
                    "errors: kind {:?} (one of {})",
                    error.kind,
                    DECLARED_ERROR_KINDS.join(", ")
                )));
            }
        }
        for group in &op.exactly_one {
            if let Some(unknown) = group.iter().find(|n| !params.contains(n.as_str())) {
                return Err(at(format!("exactly_one names {unknown:?}, not a param")));
            }
        }
    }
    check_models(&declarations)?;
    check_enums(&declarations)?;
    let mut records = HashSet::new();
    for record in &declarations.records {
        if declarations.models.iter().any(|m| m.name == record.name) {
            return Err(format!(
                "api/operations.toml: record {:?} has the name of a model core published first (roomchat::{0}): give it another",
                record.name
            ));
        }
        if !records.insert(record.name.as_str()) {
            return Err(format!(
                "api/operations.toml: record {:?} declared twice",
                record.name
            ));
        }
    }
    for record in &declarations.records {
        let mut names = HashSet::new();
        for field in &record.fields {
            let at = format!(
                "api/operations.toml, record {:?}, field {:?}",
                record.name, field.name
            );
            check_field(field, &mut names, &records, "record", &MODEL_TYPES[..5])
                .map_err(|why| format!("{at}: {why}"))?;
            if field.secret && field.kind != "string" {
                return Err(format!("{at}: only a string field may be secret"));
            }
            if field.presence != Presence::Optional {
                return Err(format!(
                    "{at}: presence {:?} is for a [[model]]: a record's every field is optional",
                    field.presence.as_str()
                ));
            }
        }
    }
    let models: HashSet<&str> = declarations
        .models
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    for op in declarations.operations.iter().filter(|op| op.is_older()) {
        // `Vec<Message>`: an older operation's result as core wrote it.
        let result = op.result_record();
        let result = result
            .strip_prefix("Vec<")
            .and_then(|r| r.strip_suffix('>'))
            .unwrap_or(result);
        if !records.contains(result) && !models.contains(result) {
            return Err(format!(
                "api/operations.toml, operation {:?}: its result {:?} is no [[record]] nor [[model]]",
                op.name, op.result
            ));
        }
    }
    for op in declarations.operations.iter().filter(|op| !op.is_older()) {
        if !records.contains(op.result_record()) {
            return Err(format!(
                "api/operations.toml, operation {:?}: its result {:?} is no [[record]]",
                op.name, op.result
            ));
        }
        if op.is_hand_written() {
            return Err(format!(
                "api/operations.toml, operation {:?}: a builder written by hand is for an older operation's published params",
                op.name
            ));
        }
    }
    for op in &declarations.operations {
        declarations.item_fields(op)?;
    }
    Ok(declarations)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An operation whose one param is declared by `param` (a TOML inline table).
    fn declared(param: &str) -> Result<Declarations, String> {
        load(&format!(
            r#"
[[operation]]
name = "list_things"
summary = "Things."
method = "GET"
path = "/v2/{{pathForm}}/things"
retry = "repeatable"
result = "Thing"
params = [
  {{ name = "pathForm", in = "path", type = "string", choices = ["room", "chatroom"], default = "room" }},
  {param},
]

[[record]]
name = "Thing"
doc = "A thing."
fields = []
"#
        ))
    }

    /// A declared default the param itself refuses is refused (issue 37, item 11):
    /// the casing slip `default = "chatRoom"` against the choices `room`/`chatroom`.
    #[test]
    fn a_default_outside_the_params_type_limits_or_choices_is_refused() {
        assert!(declared(r#"{ name = "limit", in = "query", type = "integer", min = 1, max = 200, default = 50 }"#).is_ok());
        for (param, why) in [
            (
                r#"{ name = "form", in = "query", type = "string", choices = ["room", "chatroom"], default = "chatRoom" }"#,
                r#"param "form": default "chatRoom" is not one of its choices (room, chatroom)"#,
            ),
            (
                r#"{ name = "limit", in = "query", type = "integer", min = 1, max = 200, default = 0 }"#,
                "default 0 is outside 1 to 200",
            ),
            (
                r#"{ name = "limit", in = "query", type = "integer", max = 200, default = 201 }"#,
                "default 201 is outside 0 to 200",
            ),
            (
                r#"{ name = "limit", in = "query", type = "integer", default = "50" }"#,
                r#"default "50" is not of its type integer"#,
            ),
            (
                r#"{ name = "name", in = "query", type = "string", max_len = 3, default = "abcd" }"#,
                "default \"abcd\" is longer than max_len 3",
            ),
            (
                r#"{ name = "on", in = "body", type = "switch", default = "on" }"#,
                r#"default "on" is not of its type switch"#,
            ),
            (
                r#"{ name = "id", in = "body", type = "id", default = "" }"#,
                "an id must not be",
            ),
        ] {
            let refused = declared(param).err().unwrap_or_default();
            assert!(refused.contains(why), "{param}: {refused}");
        }
        // The path's own default is checked too.
        let slip = load(
            r#"
[[operation]]
name = "list_things"
summary = "Things."
method = "GET"
path = "/v2/{pathForm}/things"
retry = "repeatable"
result = "Thing"
params = [
  { name = "pathForm", in = "path", type = "string", choices = ["room", "chatroom"], default = "chatRoom" },
]

[[record]]
name = "Thing"
doc = "A thing."
fields = []
"#,
        );
        assert!(
            slip.as_ref()
                .err()
                .is_some_and(|e| e
                    .contains(r#"param "pathForm": default "chatRoom" is not one of its choices"#)),
            "{slip:?}"
        );
    }

    /// An operation answering `Thing`, with `extra` (a model, a record) after it.
    fn get_thing_with(extra: &str) -> Result<Declarations, String> {
        load(&format!(
            r#"
[[operation]]
name = "get_thing"
summary = "A thing."
method = "GET"
path = "/v2/thing"
retry = "repeatable"
result = "Thing"

[operation.rust]

{extra}
"#
        ))
    }

    /// `get_thing_with` a model `Thing` of one field.
    fn thing_model(field: &str) -> Result<Declarations, String> {
        get_thing_with(&format!(
            "[[model]]\nname = \"Thing\"\ndoc = \"A thing.\"\nwhat = \"a thing\"\nfields = [ {field} ]"
        ))
    }

    /// A model's presences and types are checked, and a record's fields stay
    /// optional (the other languages' generators read every record so).
    #[test]
    fn models_are_checked_and_records_stay_optional() {
        let (with, model) = (get_thing_with, thing_model);
        model(r#"{ name = "n", type = "unsigned", presence = "required", doc = "N." }"#).unwrap();
        for (field, why) in [
            (
                r#"{ name = "n", type = "unsigned", presence = "sometimes", doc = "N." }"#,
                "unknown variant `sometimes`",
            ),
            (
                r#"{ name = "n", type = "u32", doc = "N." }"#,
                r#"type "u32""#,
            ),
            (
                r#"{ name = "t", type = "string", secret = true, doc = "T." }"#,
                "a model's secret is a string that is not optional",
            ),
            (
                r#"{ name = "l", type = "[Other]", doc = "L." }"#,
                r#"no model "Other""#,
            ),
        ] {
            let refused = model(field).err().unwrap_or_default();
            assert!(refused.contains(why), "{field}: {refused}");
        }
        let record = with(
            "[[record]]\nname = \"Thing\"\ndoc = \"A thing.\"\nfields = [ { name = \"n\", type = \"integer\", presence = \"required\", doc = \"N.\" } ]",
        );
        assert!(
            record
                .as_ref()
                .err()
                .is_some_and(|e| e.contains("is for a [[model]]")),
            "{record:?}"
        );
        let unknown = with("");
        assert!(
            unknown
                .as_ref()
                .err()
                .is_some_and(|e| e.contains("no [[record]] nor [[model]]")),
            "{unknown:?}"
        );
    }

    /// An older operation's enums (`[operation.enums]`, read by every language)
    /// are checked where they are declared: what a variant carries, the values
    /// it gives, the group it picks from, one definition each.
    #[test]
    fn the_older_operations_enums_are_checked() {
        let with_rust = |rust: &str, form: &str, by: &str| {
            load(&format!(
                r#"
[[operation]]
name = "find_thing"
summary = "A thing."
method = "POST"
path = "/v2/{{pathForm}}/thing"
retry = "repeatable"
result = "Thing"
params = [
  {{ name = "pathForm", in = "path", type = "string", choices = ["room", "chatroom"], default = "room" }},
  {{ name = "thingId", in = "body", type = "id" }},
  {{ name = "thingKey", in = "body", type = "string" }},
  {{ name = "count", in = "body", type = "integer" }},
]
exactly_one = [["thingId", "thingKey"]]

{rust}

[operation.enums.form]
{form}

[operation.enums.by]
{by}

[[record]]
name = "Thing"
doc = "A thing."
fields = []
"#
            ))
        };
        let with = |form: &str, by: &str| with_rust("[operation.rust]", form, by);
        let newer = with_rust("", "name = \"x\"", "name = \"y\"")
            .err()
            .unwrap_or_default();
        assert!(
            newer.contains("[operation.enums] is for an older operation's"),
            "{newer}"
        );
        let form = r#"name = "path_form"
param = "pathForm"
variants = [ { name = "Room", value = "room", doc = "R." }, { name = "ChatRoom", value = "chatroom", doc = "C." } ]"#;
        let by = r#"name = "thing_identifier"
variants = [ { name = "ThingId", carries = "thingId", doc = "I." }, { name = "ThingKey", carries = "thingKey", doc = "K." } ]"#;
        with(form, by).unwrap();
        for (form_now, by_now, why) in [
            (
                form.replace("\"chatroom\"", "\"chatRoom\""),
                by.to_owned(),
                r#"variant ChatRoom: "chatRoom" is not a choice of pathForm"#,
            ),
            (
                form.replace("value = \"room\", ", ""),
                by.to_owned(),
                "variant Room has no value",
            ),
            (
                form.replace("\"pathForm\"", "\"pathFrom\""),
                by.to_owned(),
                r#"param "pathFrom" is not declared"#,
            ),
            (
                form.to_owned(),
                by.replace("carries = \"thingKey\"", "carries = \"thingKy\""),
                r#"variant ThingKey: carries "thingKy", not a string param"#,
            ),
            (
                form.to_owned(),
                by.replace("carries = \"thingKey\"", "carries = \"count\""),
                r#"variant ThingKey: carries "count", not a string param"#,
            ),
            (
                form.to_owned(),
                by.replace("\"thingId\", doc", "\"thingKey\", doc"),
                "each variant carries a param of the exactly_one group, in order",
            ),
            (
                form.to_owned(),
                "name = \"path_form\"\nparam = \"pathForm\"".to_owned(),
                r#"[operation.enums.by]: an enum without variants names "path_form", defined by another operation: give only its name"#,
            ),
            (
                form.to_owned(),
                "name = \"thing_id\"".to_owned(),
                r#"enum "thing_id" is defined nowhere"#,
            ),
            (
                form.to_owned(),
                by.replace("thing_identifier", "path_form"),
                r#"enum "path_form" is defined twice"#,
            ),
        ] {
            let refused = with(&form_now, &by_now).err().unwrap_or_default();
            assert!(refused.contains(why), "{form_now}\n{by_now}\n{refused}");
        }
    }

    /// A value of a closed key that is none of those allowed (a new retry
    /// class, a misspelt type) is refused by serde, naming the operation, model
    /// or record it is in and the values allowed, never read as a fallback.
    #[test]
    fn a_value_outside_a_keys_allowed_ones_names_where_and_what_is_allowed() {
        let op = |keys: &str, param: &str| {
            load(&format!(
                r#"
[[operation]]
name = "list_things"
summary = "Things."
method = "GET"
path = "/v2/things"
{keys}
result = "Thing"
params = [ {param} ]

[[record]]
name = "Thing"
doc = "A thing."
fields = [ {{ name = "n", type = "integer", doc = "N." }} ]
"#
            ))
        };
        let param = r#"{ name = "limit", in = "query", type = "integer" }"#;
        op(r#"retry = "repeatable""#, param).unwrap();
        for (keys, param, why) in [
            (
                r#"retry = "twice""#,
                param,
                "unknown variant `twice`, expected `repeatable` or `never`",
            ),
            (
                "retry = \"never\"\nauth = \"secret_key\"",
                param,
                "unknown variant `secret_key`, expected `private_key` or `public_key`",
            ),
            (
                "retry = \"never\"\npages = \"cursor\"",
                param,
                "unknown variant `cursor`, expected one of `none`, `total`, `total_records`",
            ),
            (
                r#"retry = "never""#,
                r#"{ name = "limit", in = "query", type = "u64" }"#,
                "unknown variant `u64`, expected one of `string`, `id`, `integer`, `boolean`, `switch`, `json`",
            ),
            (
                r#"retry = "never""#,
                r#"{ name = "limit", in = "header", type = "integer" }"#,
                "unknown variant `header`, expected one of `path`, `query`, `body`",
            ),
            (
                "retry = \"never\"\nextra_fields = [ { name = \"e\", type = \"integer\" } ]",
                param,
                "unknown variant `integer`, expected `string` or `json`",
            ),
        ] {
            let refused = op(keys, param).err().unwrap_or_default();
            assert!(
                refused.starts_with(r#"api/operations.toml, operation "list_things": "#)
                    && refused.contains(why)
                    && refused.contains("line "),
                "{keys} {param}:\n{refused}"
            );
        }
        let presence =
            thing_model(r#"{ name = "n", type = "unsigned", presence = "sometimes", doc = "N." }"#)
                .err()
                .unwrap_or_default();
        assert!(
            presence.starts_with(r#"api/operations.toml, model "Thing": "#)
                && presence.contains(
                    "unknown variant `sometimes`, expected one of `optional`, `required`, `defaulted`, `nullable`"
                ),
            "{presence}"
        );
    }

    /// The declarations in the repository pass.
    #[test]
    fn the_repositorys_declarations_load() {
        let text = include_str!("../../api/operations.toml");
        load(text).unwrap();
    }
}
