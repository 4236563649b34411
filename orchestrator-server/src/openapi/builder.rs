//! The document builder: the route table and each route's description
//! become the OpenAPI document.

use super::describe::*;
use super::docs;
use super::enums::ConstsAsEnum;
use crate::routes::{Access, Route};
use http::{Method, StatusCode};
use orchestrator_core::api::*;
use schemars::SchemaGenerator;
use schemars::generate::SchemaSettings;
use schemars::transform::ReplaceBoolSchemas;
use serde_json::{Map, Value, json};

/// The error envelope's statuses a route can answer, from what the table and
/// its description say about it.
fn error_statuses(route: &Route, doc: &Doc) -> Vec<StatusCode> {
    let api = route.path.starts_with("/api/");
    let has_params = route.path.contains('{');
    let has_input = doc.body.is_some() || !doc.query.is_empty() || has_params;
    let writes = route.method != Method::GET;
    let mut statuses = Vec::new();
    if has_input {
        statuses.push(StatusCode::BAD_REQUEST);
    }
    if matches!(route.access, Access::Scoped(_)) || route.path.starts_with("/api/v1/auth/") {
        statuses.push(StatusCode::UNAUTHORIZED);
    }
    if matches!(route.access, Access::Scoped(_)) {
        statuses.push(StatusCode::FORBIDDEN);
    }
    if has_params {
        statuses.push(StatusCode::NOT_FOUND);
    }
    if api && writes {
        statuses.push(StatusCode::CONFLICT);
    }
    if doc.body.is_some() {
        statuses.push(StatusCode::PAYLOAD_TOO_LARGE);
    }
    if has_input {
        statuses.push(StatusCode::UNPROCESSABLE_ENTITY);
    }
    if route.rate_limited {
        statuses.push(StatusCode::TOO_MANY_REQUESTS);
    }
    if api || route.path == "/readyz" {
        statuses.push(StatusCode::SERVICE_UNAVAILABLE);
    }
    statuses
}

/// Every status of the error envelope, shared by the operations through
/// `components/responses`.
const ERROR_STATUSES: [StatusCode; 9] = [
    StatusCode::BAD_REQUEST,
    StatusCode::UNAUTHORIZED,
    StatusCode::FORBIDDEN,
    StatusCode::NOT_FOUND,
    StatusCode::CONFLICT,
    StatusCode::PAYLOAD_TOO_LARGE,
    StatusCode::UNPROCESSABLE_ENTITY,
    StatusCode::TOO_MANY_REQUESTS,
    StatusCode::SERVICE_UNAVAILABLE,
];

fn error_response_name(status: StatusCode) -> String {
    status
        .canonical_reason()
        .unwrap_or("Error")
        .split(|c: char| !c.is_ascii_alphanumeric())
        .collect()
}

fn error_responses(generator: &mut SchemaGenerator) -> Map<String, Value> {
    let error = schema::<ErrorEnvelope>(generator).to_value();
    ERROR_STATUSES
        .iter()
        .map(|status| {
            let about = format!(
                "{} {}: the error envelope",
                status.as_u16(),
                status.canonical_reason().unwrap_or("Error")
            );
            (
                error_response_name(*status),
                json!({"description": about, "content": json_content(error.clone())}),
            )
        })
        .collect()
}

pub(super) fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("bad schema literal {text}: {e}"))
}

/// Removes `null` from a schema's alternatives: a query parameter is absent
/// rather than null.
fn strip_null(mut schema: Value) -> Value {
    let Some(object) = schema.as_object_mut() else {
        return schema;
    };
    if let Some(Value::Array(types)) = object.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types[0].clone();
            object.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = object.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = object.get_mut(key) {
            options.retain(|o| o.get("type").is_none_or(|t| t != "null"));
            if options.len() == 1 {
                let only = options.remove(0);
                object.remove(key);
                if let Value::Object(fields) = only {
                    for (k, v) in fields {
                        object.entry(k).or_insert(v);
                    }
                }
            }
        }
    }
    schema
}

fn query_parameter(name: &str, schema: Value, about: Option<String>, required: bool) -> Value {
    let mut schema = strip_null(schema);
    let description = about.or_else(|| {
        schema
            .as_object_mut()
            .and_then(|o| o.remove("description"))
            .and_then(|d| d.as_str().map(str::to_owned))
    });
    if let Some(o) = schema.as_object_mut() {
        o.remove("title");
        o.remove("$schema");
        o.remove("default");
    }
    let mut parameter = json!({
        "name": name,
        "in": "query",
        "required": required,
        "schema": schema,
    });
    if let Some(description) = description {
        parameter["description"] = Value::String(description);
    }
    parameter
}

fn query_parameters(queries: &[Query], inline: &mut SchemaGenerator) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for query in queries {
        match query {
            Query::Struct(schema) => {
                let schema = schema(inline).to_value();
                let required: Vec<&str> = schema
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                    for (name, property) in properties {
                        out.push(query_parameter(
                            name,
                            property.clone(),
                            None,
                            required.contains(&name.as_str()),
                        ));
                    }
                }
            }
            Query::One(name, schema, about) => {
                out.push(query_parameter(
                    name,
                    parse(schema),
                    Some((*about).into()),
                    false,
                ));
            }
            Query::Enum(name, schema, about, required) => {
                out.push(query_parameter(
                    name,
                    schema(inline).to_value(),
                    Some((*about).into()),
                    *required,
                ));
            }
            Query::Paging => {
                out.push(query_parameter(
                    "page",
                    json!({"type": "integer", "minimum": 1, "default": 1}),
                    Some("Page number, from 1".into()),
                    false,
                ));
                out.push(query_parameter(
                    "per_page",
                    json!({"type": "integer", "minimum": 1}),
                    Some("Items per page (default 20, clamped to 100)".into()),
                    false,
                ));
            }
        }
    }
    // One parameter per name: a struct's own `page`/`per_page` wins.
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|p| seen.insert(p["name"].as_str().unwrap_or_default().to_owned()));
    out
}

/// `{id}` stays `{id}`; matchit's catch-all `{*path}` becomes `{path}`.
fn openapi_path(path: &str) -> String {
    path.replace("{*", "{")
}

fn path_parameters(route: &Route, doc: Option<&Doc>) -> Vec<Value> {
    let text = doc.map(|d| d.text_params).unwrap_or(&[]);
    openapi_path(route.path)
        .split('/')
        .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
        .map(|name| {
            let schema = if text.contains(&name) {
                json!({"type": "string"})
            } else {
                json!({"type": "string", "format": "uuid"})
            };
            json!({"name": name, "in": "path", "required": true, "schema": schema})
        })
        .collect()
}

fn operation_id(route: &Route) -> String {
    let mut id = route.method.as_str().to_ascii_lowercase();
    let words: String = route
        .path
        .trim_start_matches("/api/v1")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let words: Vec<&str> = words.split('_').filter(|w| !w.is_empty()).collect();
    id.push('_');
    id.push_str(&if words.is_empty() {
        "root".to_owned()
    } else {
        words.join("_")
    });
    id
}

fn tag(path: &str) -> String {
    match path.strip_prefix("/api/v1/") {
        Some(rest) => rest.split('/').next().unwrap_or("api").to_owned(),
        None if path == "/" || path.starts_with("/ui") => "dashboard".to_owned(),
        None if path.starts_with("/api/docs") => "openapi".to_owned(),
        None if path.starts_with("/.well-known") => "a2a".to_owned(),
        None => "service".to_owned(),
    }
}

fn envelope(data: Value, meta: Value) -> Value {
    json!({
        "type": "object",
        "required": ["data", "meta"],
        "properties": {"data": data, "meta": meta},
    })
}

fn json_content(schema: Value) -> Value {
    json!({"application/json": {"schema": schema}})
}

fn success_response(success: Success, generator: &mut SchemaGenerator) -> (StatusCode, Value) {
    match success {
        Success::Data(status, data) => {
            let data = data(generator).to_value();
            let meta = schema::<ResponseMeta>(generator).to_value();
            (
                status,
                json!({"description": "`{data, meta}`", "content": json_content(envelope(data, meta))}),
            )
        }
        Success::Page(item) => {
            let items = json!({"type": "array", "items": item(generator).to_value()});
            let meta = schema::<ListMeta>(generator).to_value();
            (
                StatusCode::OK,
                json!({"description": "A page: `{data: [...], meta: {total, page, per_page, pages}}`", "content": json_content(envelope(items, meta))}),
            )
        }
        Success::Cursor(item, fields) => {
            let items = json!({"type": "array", "items": item(generator).to_value()});
            let mut properties = Map::new();
            properties.insert("request_id".into(), json!({"type": "string"}));
            properties.insert(
                "timestamp".into(),
                schema::<Timestamp>(generator).to_value(),
            );
            let mut required = vec![json!("request_id"), json!("timestamp")];
            for (name, field) in fields {
                properties.insert((*name).into(), parse(field));
                required.push(json!(name));
            }
            let meta = json!({"type": "object", "required": required, "properties": properties});
            (
                StatusCode::OK,
                json!({"description": "A cursor page: `{data: [...], meta}` with the cursor in `meta`", "content": json_content(envelope(items, meta))}),
            )
        }
        Success::Plain(body) => (
            StatusCode::OK,
            json!({"description": "A JSON body without the envelope", "content": json_content(body(generator).to_value())}),
        ),
        Success::Events(frame, about) => (
            StatusCode::OK,
            json!({
                "description": format!("Server-sent events. {about}"),
                "content": {"text/event-stream": {
                    "schema": {"type": "string"},
                    "x-event-data": frame(generator).to_value(),
                }},
            }),
        ),
        Success::Download => (
            StatusCode::OK,
            json!({
                "description": "The file's bytes, with its own Content-Type, an ETag and Content-Disposition",
                "content": {"application/octet-stream": {"schema": {"type": "string", "contentMediaType": "application/octet-stream"}}},
            }),
        ),
        Success::Export(row) => (
            StatusCode::OK,
            json!({
                "description": "An attachment: a JSON array of rows, or CSV with a header line",
                "content": {
                    "application/json": {"schema": {"type": "array", "items": row(generator).to_value()}},
                    "text/csv": {"schema": {"type": "string"}},
                },
            }),
        ),
        Success::Text(types) => {
            let content: Map<String, Value> = types
                .iter()
                .map(|t| ((*t).to_owned(), json!({"schema": {"type": "string"}})))
                .collect();
            (
                StatusCode::OK,
                json!({"description": "The body as it is", "content": content}),
            )
        }
    }
}

fn security(access: Access) -> Value {
    match access {
        Access::Public => json!([]),
        Access::Scoped(scope) => json!([
            {"bearerAuth": [scope.as_str()]},
            {"cookieSession": [scope.as_str()]},
        ]),
    }
}

fn operation(
    route: &Route,
    doc: Option<&Doc>,
    generator: &mut SchemaGenerator,
    inline: &mut SchemaGenerator,
) -> Value {
    let mut op = Map::new();
    op.insert("operationId".into(), json!(operation_id(route)));
    op.insert("tags".into(), json!([tag(route.path)]));
    op.insert("security".into(), security(route.access));
    if let Access::Scoped(scope) = route.access {
        op.insert("x-scope".into(), json!(scope.as_str()));
    }
    op.insert("x-body-limit".into(), json!(route.body_limit));
    op.insert("x-rate-limited".into(), json!(route.rate_limited));
    if let Some((scope, _)) = &route.upgrade {
        op.insert(
            "x-websocket-upgrade".into(),
            json!({
                "scope": scope.as_str(),
                "description": "With `Upgrade: websocket` this path opens the worker channel (101 Switching Protocols); frames are JSON messages",
                "client-messages": schema::<WorkerMessage>(generator).to_value(),
                "server-messages": schema::<ServerMessage>(generator).to_value(),
            }),
        );
    }
    let mut parameters = path_parameters(route, doc);
    let Some(doc) = doc else {
        op.insert(
            "summary".into(),
            json!("UNDOCUMENTED: add this route to its group in orchestrator-server/src/openapi/"),
        );
        op.insert("x-undocumented".into(), json!(true));
        if !parameters.is_empty() {
            op.insert("parameters".into(), json!(parameters));
        }
        op.insert(
            "responses".into(),
            json!({"default": {"description": "Not documented"}}),
        );
        return Value::Object(op);
    };
    op.insert("summary".into(), json!(doc.summary));
    parameters.extend(query_parameters(&doc.query, inline));
    if !parameters.is_empty() {
        op.insert("parameters".into(), json!(parameters));
    }
    if let Some(body) = doc.body {
        let schema = body(generator).to_value();
        let required = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.rsplit('/').next())
            .and_then(|name| generator.definitions().get(name))
            .and_then(|d| d.get("required"))
            .and_then(Value::as_array)
            .is_some_and(|r| !r.is_empty());
        op.insert(
            "requestBody".into(),
            json!({"required": required, "content": json_content(schema)}),
        );
    }
    let mut responses = Map::new();
    let (status, success) = success_response(doc.success, generator);
    responses.insert(status.as_u16().to_string(), success);
    if matches!(doc.success, Success::Data(StatusCode::CREATED, _))
        && doc.path == "/api/v1/acp/sessions"
    {
        // An open session that is reused answers 200 with the same body.
        let (_, reused) = success_response(doc.success, generator);
        responses.insert("200".into(), reused);
    }
    if doc.no_content {
        responses.insert("204".into(), json!({"description": "Nothing to claim"}));
    }
    if matches!(doc.success, Success::Download) {
        responses.insert(
            "304".into(),
            json!({"description": "Not modified (If-None-Match matched the ETag)"}),
        );
    }
    let error = schema::<ErrorEnvelope>(generator).to_value();
    for status in error_statuses(route, doc) {
        responses.insert(
            status.as_u16().to_string(),
            json!({"$ref": format!("#/components/responses/{}", error_response_name(status))}),
        );
    }
    for (status, plain) in &doc.plain_errors {
        let schema = json!({"anyOf": [error.clone(), parse(plain)]});
        let reason = status.canonical_reason().unwrap_or("Error");
        responses.insert(
            status.as_u16().to_string(),
            json!({"description": reason, "content": json_content(schema)}),
        );
    }
    op.insert("responses".into(), Value::Object(responses));
    Value::Object(op)
}

/// The document for `table`.
pub(crate) fn document(table: &[Route]) -> Value {
    let mut generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.definitions_path = "/components/schemas".into();
            s.meta_schema = None;
        })
        .with_transform({
            let mut any_json = ReplaceBoolSchemas::default();
            any_json.skip_additional_properties = true;
            any_json
        })
        .with_transform(ConstsAsEnum)
        .into_generator();
    let mut inline = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .with_transform(ConstsAsEnum)
        .into_generator();
    let docs = docs();
    let mut paths = Map::new();
    for route in table {
        let doc = docs
            .iter()
            .find(|d| d.method == route.method && d.path == route.path);
        let operation = operation(route, doc, &mut generator, &mut inline);
        let item = paths
            .entry(openapi_path(route.path))
            .or_insert_with(|| json!({}));
        item[route.method.as_str().to_ascii_lowercase()] = operation;
    }
    let responses = error_responses(&mut generator);
    let schemas = generator.take_definitions(true);
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "orch control plane API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Generated from the server's route table and wire types; never edited by hand. \
                Scopes are ordered agent < worker < admin < service: a credential satisfies every route whose scope is at most its own. \
                Every success body is `{data, meta}`; every error body is `{error: {code, message, recovery_hint?, details?}, meta}`.",
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "responses": responses,
            "securitySchemes": {
                "bearerAuth": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An access token from POST /api/v1/auth/token, or an API key. The listed role is the least scope the route needs.",
                },
                "cookieSession": {
                    "type": "apiKey",
                    "in": "cookie",
                    "name": "service_access_token",
                    "description": "The browser session set by /api/v1/auth/token; writes also need the CSRF header matching the service_csrf_token cookie.",
                },
            },
        },
    })
}
