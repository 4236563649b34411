//! Tenant settings: the LLM provider (`/settings/llm`, admin). The key and
//! the extra headers' values are sealed at rest with the deployment's key
//! ([`crate::secrets`]), bound to the tenant and the field, and never read
//! back: reads show [`SECRET_MASK`]. Claimed tasks receive them through
//! claim credentials ([`crate::tasks`]).

use crate::api::{LlmSettings, PutLlmSettings, SECRET_MASK};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::secrets::Secrets;
use crate::store::{Access, on_db};
use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::types::Json;
use std::collections::BTreeMap;
use uuid::Uuid;

const MAX_TEXT: usize = 200;
const MAX_URL: usize = 2048;
const MAX_SECRET: usize = 8192;
const MAX_HEADERS: usize = 32;

/// Whether `name` is an HTTP header name (an RFC 9110 token).
pub(crate) fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_TEXT
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// A secret value fit for a header or a query (no control characters).
pub(crate) fn check_secret(field: &str, value: &str) -> Result<()> {
    if value.is_empty() || value.len() > MAX_SECRET || value.chars().any(char::is_control) {
        return Err(Error::invalid_field(
            field,
            format!("must be 1 to {MAX_SECRET} characters without control characters"),
        ));
    }
    Ok(())
}

/// Seals `value` for `context`, or keeps `stored` when the value is the
/// mask (a write that echoes what it read keeps the secret).
pub(crate) fn seal_or_keep(
    secrets: &Secrets,
    field: &str,
    value: &str,
    stored: Option<&str>,
    context: &str,
) -> Result<String> {
    if value == SECRET_MASK {
        return stored.map(str::to_owned).ok_or_else(|| {
            Error::invalid_field(field, "is the mask, but no value is stored to keep")
        });
    }
    check_secret(field, value)?;
    Ok(secrets.encrypt(value.as_bytes(), context.as_bytes()))
}

/// Opens a value sealed by [`seal_or_keep`].
pub(crate) fn open_sealed(secrets: &Secrets, sealed: &str, context: &str) -> Result<String> {
    let bytes = secrets.decrypt(sealed, context.as_bytes())?;
    String::from_utf8(bytes).map_err(Error::internal)
}

fn api_key_context(tenant_id: Uuid) -> String {
    format!("llm_settings:{tenant_id}:api_key")
}

fn header_context(tenant_id: Uuid, name: &str) -> String {
    format!(
        "llm_settings:{tenant_id}:header:{}",
        name.to_ascii_lowercase()
    )
}

/// The stored row (secrets sealed).
#[derive(sqlx::FromRow)]
pub(crate) struct StoredLlm {
    pub tenant_id: Uuid,
    pub provider: String,
    pub model: Option<String>,
    pub base_url: Option<String>,
    api_key: Option<String>,
    extra_headers: Json<BTreeMap<String, String>>,
    pub updated_at: DateTime<Utc>,
}

impl StoredLlm {
    fn to_api(&self) -> LlmSettings {
        LlmSettings {
            provider: Some(self.provider.clone()),
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            api_key: self.api_key.as_ref().map(|_| SECRET_MASK.to_owned()),
            extra_headers: self
                .extra_headers
                .0
                .keys()
                .map(|k| (k.clone(), SECRET_MASK.to_owned()))
                .collect(),
            updated_at: Some(self.updated_at.into()),
        }
    }

    pub fn has_api_key(&self) -> bool {
        self.api_key.is_some()
    }

    pub fn has_extra_headers(&self) -> bool {
        !self.extra_headers.0.is_empty()
    }

    /// The key in clear (for the task's assignee only).
    pub fn api_key(&self, secrets: &Secrets) -> Result<Option<String>> {
        self.api_key
            .as_deref()
            .map(|sealed| open_sealed(secrets, sealed, &api_key_context(self.tenant_id)))
            .transpose()
    }

    /// The extra headers in clear (for the task's assignee only).
    pub fn extra_headers(&self, secrets: &Secrets) -> Result<BTreeMap<String, String>> {
        self.extra_headers
            .0
            .iter()
            .map(|(name, sealed)| {
                Ok((
                    name.clone(),
                    open_sealed(secrets, sealed, &header_context(self.tenant_id, name))?,
                ))
            })
            .collect()
    }
}

/// The tenant's LLM settings row, if any.
pub(crate) async fn stored_llm(
    access: &mut impl Access,
    tenant_id: Uuid,
) -> Result<Option<StoredLlm>> {
    Ok(on_db!(access, c => sqlx::query_as(
        "SELECT tenant_id, provider, model, base_url, api_key, extra_headers, updated_at \
         FROM llm_settings WHERE tenant_id = $1",
    )
    .bind(tenant_id)
    .fetch_optional(c)
    .await)?)
}

fn check_text(field: &str, value: Option<&String>, max: usize) -> Result<()> {
    if value.is_some_and(|v| v.trim().is_empty() || v.len() > max) {
        return Err(Error::invalid_field(
            field,
            format!("must be 1 to {max} characters"),
        ));
    }
    Ok(())
}

fn validate(request: &PutLlmSettings) -> Result<()> {
    check_text("provider", Some(&request.provider), MAX_TEXT)?;
    check_text("model", request.model.as_ref(), MAX_TEXT)?;
    check_text("base_url", request.base_url.as_ref(), MAX_URL)?;
    if let Some(url) = &request.base_url
        && !(url.starts_with("https://") || url.starts_with("http://"))
    {
        return Err(Error::invalid_field("base_url", "must be an http(s) URL"));
    }
    let headers = request.extra_headers.as_ref();
    if headers.is_some_and(|h| h.len() > MAX_HEADERS) {
        return Err(Error::invalid_field(
            "extra_headers",
            format!("at most {MAX_HEADERS} headers"),
        ));
    }
    if let Some(bad) = headers
        .into_iter()
        .flatten()
        .find(|(n, _)| !is_header_name(n))
    {
        return Err(Error::invalid_field(
            "extra_headers",
            format!("`{}` is not a header name", bad.0),
        ));
    }
    Ok(())
}

impl ControlPlane {
    /// `GET /settings/llm`: secrets masked; all null before the first PUT.
    pub async fn get_llm_settings(&self, caller: &Caller) -> Result<LlmSettings> {
        let mut conn = self.store().read().await?;
        Ok(stored_llm(&mut conn, caller.tenant_id)
            .await?
            .map(|s| s.to_api())
            .unwrap_or_default())
    }

    /// `PUT /settings/llm`: replaces the settings, sealing the secrets (a
    /// masked value keeps the stored one). Writes `settings.llm_updated`
    /// (names only, no values).
    pub async fn put_llm_settings(
        &self,
        caller: &Caller,
        request: PutLlmSettings,
    ) -> Result<LlmSettings> {
        validate(&request)?;
        let tenant_id = caller.tenant_id;
        let mut tx = self.store().begin().await?;
        let stored = stored_llm(&mut tx, tenant_id).await?;
        let api_key = request
            .api_key
            .as_deref()
            .map(|key| {
                seal_or_keep(
                    self.secrets(),
                    "api_key",
                    key,
                    stored.as_ref().and_then(|s| s.api_key.as_deref()),
                    &api_key_context(tenant_id),
                )
            })
            .transpose()?;
        let mut headers = BTreeMap::new();
        for (name, value) in request.extra_headers.iter().flatten() {
            let kept = stored
                .as_ref()
                .and_then(|s| s.extra_headers.0.get(name))
                .map(String::as_str);
            let sealed = seal_or_keep(
                self.secrets(),
                &format!("extra_headers.{name}"),
                value,
                kept,
                &header_context(tenant_id, name),
            )?;
            headers.insert(name.clone(), sealed);
        }
        let now = self.now().as_datetime();
        let row: StoredLlm = on_db!(&mut tx, c => sqlx::query_as(
            "INSERT INTO llm_settings (tenant_id, provider, model, base_url, api_key, extra_headers, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) \
             ON CONFLICT (tenant_id) DO UPDATE SET provider = $2, model = $3, base_url = $4, \
             api_key = $5, extra_headers = $6, updated_at = $7 \
             RETURNING tenant_id, provider, model, base_url, api_key, extra_headers, updated_at",
        )
        .bind(tenant_id)
        .bind(request.provider.trim())
        .bind(request.model.as_deref().map(str::trim))
        .bind(request.base_url.as_deref().map(str::trim))
        .bind(&api_key)
        .bind(Json(&headers))
        .bind(now)
        .fetch_one(c)
        .await)?;
        events::record(
            &mut tx,
            caller,
            tenant_id,
            NewEvent::new(
                "settings.llm_updated",
                "settings",
                tenant_id,
                json!({
                    "provider": row.provider, "model": row.model, "base_url": row.base_url,
                    "api_key_set": row.has_api_key(),
                    "extra_header_names": headers.keys().collect::<Vec<_>>(),
                }),
            ),
        )
        .await?;
        tx.commit().await?;
        self.claim_cache().forget_inputs(tenant_id);
        Ok(row.to_api())
    }
}
