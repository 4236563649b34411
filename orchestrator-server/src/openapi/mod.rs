//! The OpenAPI 3.1 document, generated from the route table and the wire types.
//!
//! Nothing here is written by hand that the code already knows: the paths,
//! methods, scopes, body limits and rate limiting come from
//! [`crate::routes::table`], and every schema is the `schemars::JsonSchema` of
//! the wire type in `orchestrator_core::api` (the `schema` feature). What the
//! table cannot know, each route's input and output types, is said once per
//! route in one file per resource group (`tasks.rs`, `workflows.rs`, ...),
//! keyed by method and path.
//!
//! A route of the table with no entry here is still listed, marked
//! `x-undocumented: true`; `tests/openapi.rs` fails on such a route, so a new
//! route cannot land undocumented. Served at `GET /api/v1/openapi.json`; the
//! reference page at `GET /api/docs` renders it.

mod builder;
mod describe;
mod enums;
mod page;

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use describe::Doc;
use http::{HeaderValue, StatusCode, header};
use std::sync::{Arc, OnceLock};

pub(crate) use builder::document;
pub(crate) use page::{docs_asset, docs_page};

/// Declares the resource groups: one module each, whose `docs()` describes
/// its routes. A new resource adds its file and one line to `groups!` below.
macro_rules! groups {
    ($($group:ident),* $(,)?) => {
        $(mod $group;)*

        /// Every route's input and output types, gathered from the groups.
        /// A new route in [`crate::routes::table`] gets its line in its group.
        fn docs() -> Vec<Doc> {
            [$($group::docs()),*].into_iter().flatten().collect()
        }
    };
}

groups! {
    service,
    auth,
    tenants,
    agents,
    tasks,
    workflows,
    playbooks,
    workspaces,
    catalog,
    logs,
    events,
    remote_mcp,
    webhooks,
    limits,
    bulk_actions,
    environments,
    schedules,
    fleet,
    a2a,
    acp,
    settings,
    dashboard,
}

/// The served document, generated once.
fn served() -> &'static [u8] {
    static DOCUMENT: OnceLock<Vec<u8>> = OnceLock::new();
    DOCUMENT.get_or_init(|| {
        let mut bytes =
            serde_json::to_vec_pretty(&document(&crate::routes::table())).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    })
}

/// `GET /api/v1/openapi.json`.
pub(crate) async fn openapi_json(_app: Arc<App>, _req: Req) -> Result<Reply, ApiError> {
    Ok(Reply::bytes(StatusCode::OK, served()).with_header(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    ))
}

/// Routes of the table that have no description, and descriptions that name
/// no route (for the unit test below and `tests/openapi.rs`).
#[cfg(test)]
fn mismatches() -> (Vec<String>, Vec<String>) {
    let table = crate::routes::table();
    let docs = docs();
    let undocumented = table
        .iter()
        .filter(|r| {
            !docs
                .iter()
                .any(|d| d.method == r.method && d.path == r.path)
        })
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    let stale = docs
        .iter()
        .filter(|d| {
            !table
                .iter()
                .any(|r| d.method == r.method && d.path == r.path)
        })
        .map(|d| format!("{} {}", d.method, d.path))
        .collect();
    (undocumented, stale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_is_described_and_every_description_has_a_route() {
        let (undocumented, stale) = mismatches();
        assert!(
            undocumented.is_empty(),
            "routes with no entry in openapi::docs(): {undocumented:?}"
        );
        assert!(
            stale.is_empty(),
            "entries in openapi::docs() with no route: {stale:?}"
        );
    }

    #[test]
    fn operation_ids_are_unique() {
        let document = document(&crate::routes::table());
        let mut seen = std::collections::BTreeSet::new();
        for item in document["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                let id = op["operationId"].as_str().unwrap().to_owned();
                assert!(seen.insert(id.clone()), "duplicate operationId {id}");
            }
        }
    }
}
