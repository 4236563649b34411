//! How a route is described: the types each resource group's file fills in,
//! and the small constructors that keep one route to one line.

use super::enums::ConstsAsEnum;
use http::{Method, StatusCode};
use orchestrator_core::api::Event;
use schemars::{JsonSchema, Schema, SchemaGenerator};

/// A schema from the generator: a `$ref` into `components/schemas` for named
/// types.
pub(super) type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

pub(super) fn schema<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    let mut schema = generator.subschema_for::<T>();
    // An inlined subschema does not pass through the generator's transforms.
    schemars::transform::Transform::transform(&mut ConstsAsEnum, &mut schema);
    // Any JSON (`serde_json::Value`) is the schema `true`; say `{}`, which
    // every tool reads.
    if schema.as_bool() == Some(true) {
        schemars::json_schema!({})
    } else {
        schema
    }
}

/// What a successful call answers.
#[derive(Clone, Copy)]
pub(super) enum Success {
    /// `{data: T, meta}` with this status.
    Data(StatusCode, SchemaFn),
    /// `{data: [T], meta: {total, page, per_page, pages, ...}}`.
    Page(SchemaFn),
    /// `{data: [T], meta}` where `meta` carries these cursor fields
    /// (name, JSON schema) beside `request_id` and `timestamp`.
    Cursor(SchemaFn, &'static [(&'static str, &'static str)]),
    /// A JSON body with no envelope.
    Plain(SchemaFn),
    /// `text/event-stream`; each frame's `data:` is one T.
    Events(SchemaFn, &'static str),
    /// A file's bytes with its own media type (`200`, or `304` on a matching
    /// `If-None-Match`).
    Download,
    /// A body of these media types (HTML, text), not JSON.
    Text(&'static [&'static str]),
    /// An export: a JSON array of T, or CSV.
    Export(SchemaFn),
}

/// How a query parameter is typed.
#[derive(Clone, Copy)]
pub(super) enum Query {
    /// The properties of a wire type parsed from the query string.
    Struct(SchemaFn),
    /// One parameter: name, JSON schema, description.
    One(&'static str, &'static str, &'static str),
    /// `page` and `per_page`.
    Paging,
    /// One parameter typed by a wire enum: name, enum, description, required.
    Enum(&'static str, SchemaFn, &'static str, bool),
}

/// The description of one route: what the table cannot know.
pub(super) struct Doc {
    pub(super) method: Method,
    pub(super) path: &'static str,
    pub(super) summary: &'static str,
    pub(super) body: Option<SchemaFn>,
    pub(super) query: Vec<Query>,
    /// Path parameters that are free text rather than UUIDs.
    pub(super) text_params: &'static [&'static str],
    pub(super) success: Success,
    /// `204 No Content` when there is nothing to claim.
    pub(super) no_content: bool,
    /// Contract error bodies that are not the envelope: status, JSON schema.
    pub(super) plain_errors: Vec<(StatusCode, &'static str)>,
}

pub(super) fn op(
    method: Method,
    path: &'static str,
    summary: &'static str,
    success: Success,
) -> Doc {
    Doc {
        method,
        path,
        summary,
        body: None,
        query: Vec::new(),
        text_params: &[],
        success,
        no_content: false,
        plain_errors: Vec::new(),
    }
}

pub(super) fn ok<T: JsonSchema>() -> Success {
    Success::Data(StatusCode::OK, schema::<T>)
}
pub(super) fn created<T: JsonSchema>() -> Success {
    Success::Data(StatusCode::CREATED, schema::<T>)
}
pub(super) fn accepted<T: JsonSchema>() -> Success {
    Success::Data(StatusCode::ACCEPTED, schema::<T>)
}
pub(super) fn page<T: JsonSchema>() -> Success {
    Success::Page(schema::<T>)
}
pub(super) fn plain<T: JsonSchema>() -> Success {
    Success::Plain(schema::<T>)
}

pub(super) const EVENT_CURSOR: &[(&str, &str)] = &[
    ("next_after", r#"{"type": ["string", "null"]}"#),
    ("has_more", r#"{"type": "boolean"}"#),
];
pub(super) const LOG_CURSOR: &[(&str, &str)] = &[
    ("next_cursor", r#"{"type": ["string", "null"]}"#),
    ("per_page", r#"{"type": "integer", "minimum": 1}"#),
];
pub(super) const HTML: &[&str] = &["text/html; charset=utf-8"];

impl Doc {
    pub(super) fn body<T: JsonSchema>(mut self) -> Self {
        self.body = Some(schema::<T>);
        self
    }
    pub(super) fn query<T: JsonSchema>(mut self) -> Self {
        self.query.push(Query::Struct(schema::<T>));
        self
    }
    pub(super) fn param(
        mut self,
        name: &'static str,
        schema: &'static str,
        about: &'static str,
    ) -> Self {
        self.query.push(Query::One(name, schema, about));
        self
    }
    pub(super) fn query_enum<T: JsonSchema>(
        mut self,
        name: &'static str,
        about: &'static str,
    ) -> Self {
        self.query
            .push(Query::Enum(name, schema::<T>, about, false));
        self
    }
    pub(super) fn query_enum_required<T: JsonSchema>(
        mut self,
        name: &'static str,
        about: &'static str,
    ) -> Self {
        self.query.push(Query::Enum(name, schema::<T>, about, true));
        self
    }
    pub(super) fn paged(mut self) -> Self {
        self.query.push(Query::Paging);
        self
    }
    pub(super) fn text_params(mut self, names: &'static [&'static str]) -> Self {
        self.text_params = names;
        self
    }
    pub(super) fn or_no_content(mut self) -> Self {
        self.no_content = true;
        self
    }
    pub(super) fn plain_error(mut self, status: StatusCode, schema: &'static str) -> Self {
        self.plain_errors.push((status, schema));
        self
    }
}

pub(super) const UUID: &str = r#"{"type": "string", "format": "uuid"}"#;
pub(super) const TEXT: &str = r#"{"type": "string"}"#;
pub(super) const BOOL: &str = r#"{"type": "boolean"}"#;
pub(super) const INT: &str = r#"{"type": "integer", "format": "int64"}"#;
pub(super) const CURSOR_AFTER: &str = r#"{"type": "integer", "format": "int64", "minimum": 0}"#;

/// A stream of event records, one per frame (tasks and the event feed).
pub(super) fn events_sse() -> Success {
    Success::Events(
        schema::<Event>,
        "One event record per frame; the SSE `event:` is the event type and `id:` the event id (resume with `Last-Event-ID` or `?after=`). Comment lines keep the connection alive.",
    )
}
