//! The rules of a create or replace body, and the sealing of secret
//! parameter values (bound to the tenant, the server, the placement and
//! the key; a replace sending the mask keeps the stored value).

use super::rows::ServerRow;
use super::verify::Target;
use crate::api::{
    DEFAULT_CALL_TIMEOUT_SECONDS, MAX_CALL_TIMEOUT_SECONDS, MIN_CALL_TIMEOUT_SECONDS, McpAuthMode,
    McpParameter, ParameterPlacement, ParameterValueKind, RemoteMcpServerRequest, SECRET_MASK,
};
use crate::error::{Error, Result};
use crate::secrets::Secrets;
use crate::settings::{check_secret, is_header_name, open_sealed, seal_or_keep};
use reqwest::Url;
use std::time::Duration;
use uuid::Uuid;

const MAX_NAME: usize = 200;
const MAX_DESCRIPTION: usize = 2000;
const MAX_URL: usize = 2048;
const MAX_PARAMETERS: usize = 32;
/// Headers the MCP transports set themselves.
const RESERVED_HEADERS: &[&str] = &[
    "accept",
    "content-type",
    "content-length",
    "host",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
];

/// A checked body: every field in normal form, parameters sealed.
pub(crate) struct Checked {
    pub name: String,
    pub description: String,
    pub endpoint: Url,
    pub call_timeout_seconds: i32,
    pub auth_mode: McpAuthMode,
    pub sealed: Vec<McpParameter>,
}

fn context(tenant_id: Uuid, server_id: Uuid, p: &McpParameter) -> String {
    format!(
        "remote_mcp:{tenant_id}:{server_id}:{}:{}",
        p.placement,
        same_key(p.placement, &p.key)
    )
}

/// The key as compared: header names ignore case.
fn same_key(placement: ParameterPlacement, key: &str) -> String {
    match placement {
        ParameterPlacement::Header => key.to_ascii_lowercase(),
        ParameterPlacement::Query => key.to_owned(),
    }
}

/// Checks the URL's form (422 when it is none) and rules (400).
pub(crate) fn endpoint(text: &str) -> Result<Url> {
    let text = text.trim();
    if text.is_empty() || text.len() > MAX_URL {
        return Err(Error::schema_field(
            "endpointUrl",
            format!("must be an http(s) URL of at most {MAX_URL} characters"),
        ));
    }
    let url = Url::parse(text)
        .map_err(|_| Error::schema_field("endpointUrl", "must be an http(s) URL"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(Error::schema_field("endpointUrl", "must be an http(s) URL"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Error::invalid_field(
            "endpointUrl",
            "must not carry credentials; send them as secret parameters",
        ));
    }
    if url.fragment().is_some() {
        return Err(Error::invalid_field(
            "endpointUrl",
            "must not have a fragment",
        ));
    }
    Ok(url)
}

/// Checks `request` and seals its secret values for server `server_id`
/// (`stored`: the row a replace keeps masked values from).
pub(crate) fn check(
    secrets: &Secrets,
    tenant_id: Uuid,
    server_id: Uuid,
    request: &RemoteMcpServerRequest,
    stored: Option<&ServerRow>,
) -> Result<Checked> {
    let name = request.name.trim().to_owned();
    if name.is_empty() || name.len() > MAX_NAME {
        return Err(Error::invalid_field(
            "name",
            format!("must be 1 to {MAX_NAME} characters"),
        ));
    }
    let description = request.description.clone().unwrap_or_default();
    if description.len() > MAX_DESCRIPTION {
        return Err(Error::invalid_field(
            "description",
            format!("at most {MAX_DESCRIPTION} characters"),
        ));
    }
    let endpoint = endpoint(&request.endpoint_url)?;
    let timeout = request
        .call_timeout_seconds
        .unwrap_or(i64::from(DEFAULT_CALL_TIMEOUT_SECONDS));
    if !(i64::from(MIN_CALL_TIMEOUT_SECONDS)..=i64::from(MAX_CALL_TIMEOUT_SECONDS))
        .contains(&timeout)
    {
        return Err(Error::schema_field(
            "callTimeoutSeconds",
            format!(
                "must be an integer from {MIN_CALL_TIMEOUT_SECONDS} to {MAX_CALL_TIMEOUT_SECONDS}"
            ),
        ));
    }
    let auth_mode = request.auth_mode.unwrap_or_default();
    let parameters = request.parameters.as_deref().unwrap_or_default();
    if parameters.len() > MAX_PARAMETERS {
        return Err(Error::invalid_field(
            "parameters",
            format!("at most {MAX_PARAMETERS} parameters"),
        ));
    }
    let mut seen: Vec<(ParameterPlacement, String)> = Vec::new();
    let mut sealed = Vec::with_capacity(parameters.len());
    for (i, p) in parameters.iter().enumerate() {
        let field = format!("parameters.{i}");
        let key = p.key.trim();
        let ok_key = match p.placement {
            ParameterPlacement::Header => {
                is_header_name(key)
                    && !RESERVED_HEADERS.contains(&key.to_ascii_lowercase().as_str())
            }
            ParameterPlacement::Query => !key.is_empty() && key.len() <= MAX_NAME,
        };
        if !ok_key {
            return Err(Error::invalid_field(
                &format!("{field}.key"),
                format!("`{key}` is not a usable {} name", p.placement),
            ));
        }
        let compared = (p.placement, same_key(p.placement, key));
        if seen.contains(&compared) {
            return Err(Error::invalid_field(
                &format!("{field}.key"),
                format!("`{key}` is given twice"),
            ));
        }
        seen.push(compared.clone());
        let mut item = McpParameter {
            key: key.to_owned(),
            ..p.clone()
        };
        match p.value_kind {
            ParameterValueKind::Plain => {
                if p.value == SECRET_MASK {
                    return Err(Error::invalid_field(
                        &format!("{field}.value"),
                        "is the mask, but the parameter is plain",
                    ));
                }
                check_secret(&format!("{field}.value"), &p.value)?;
            }
            ParameterValueKind::Secret => {
                let kept = stored.and_then(|row| {
                    row.parameters.0.iter().find(|s| {
                        s.value_kind == ParameterValueKind::Secret
                            && s.placement == p.placement
                            && same_key(s.placement, &s.key) == compared.1
                    })
                });
                let value = match kept {
                    // A kept value is re-sealed for this server id.
                    Some(kept) if p.value == SECRET_MASK => open_sealed(
                        secrets,
                        &kept.value,
                        &context(tenant_id, row_id(stored), kept),
                    )?,
                    _ => p.value.clone(),
                };
                item.value = seal_or_keep(
                    secrets,
                    &format!("{field}.value"),
                    &value,
                    None,
                    &context(tenant_id, server_id, &item),
                )?;
            }
        }
        sealed.push(item);
    }
    Ok(Checked {
        name,
        description,
        endpoint,
        call_timeout_seconds: i32::try_from(timeout).unwrap_or(1),
        auth_mode,
        sealed,
    })
}

fn row_id(stored: Option<&ServerRow>) -> Uuid {
    stored.map(|r| r.id).unwrap_or_default()
}

/// The parameters in clear (secrets opened).
pub(crate) fn open_parameters(
    secrets: &Secrets,
    tenant_id: Uuid,
    server_id: Uuid,
    sealed: &[McpParameter],
) -> Result<Vec<McpParameter>> {
    sealed
        .iter()
        .map(|p| {
            Ok(match p.value_kind {
                ParameterValueKind::Plain => p.clone(),
                ParameterValueKind::Secret => McpParameter {
                    value: open_sealed(secrets, &p.value, &context(tenant_id, server_id, p))?,
                    ..p.clone()
                },
            })
        })
        .collect()
}

/// What verification needs: the endpoint, the parameters in clear, the
/// bound of a call.
pub(crate) fn target(endpoint: Url, clear: &[McpParameter], timeout_seconds: i32) -> Target {
    let pairs = |placement| {
        clear
            .iter()
            .filter(|p| p.placement == placement)
            .map(|p| (p.key.clone(), p.value.clone()))
            .collect()
    };
    Target {
        endpoint,
        headers: pairs(ParameterPlacement::Header),
        query: pairs(ParameterPlacement::Query),
        timeout: Duration::from_secs(u64::try_from(timeout_seconds.max(1)).unwrap_or(1)),
        bearer: None,
    }
}

/// `text` with every secret value of `clear` masked.
pub(crate) fn scrub(text: &str, clear: &[McpParameter]) -> String {
    clear
        .iter()
        .filter(|p| p.value_kind == ParameterValueKind::Secret && !p.value.is_empty())
        .fold(text.to_owned(), |text, p| {
            text.replace(&p.value, SECRET_MASK)
        })
}
