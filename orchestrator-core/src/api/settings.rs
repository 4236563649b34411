//! Tenant settings beyond the contract: the LLM provider whose key and extra
//! headers claimed tasks receive through claim credentials.

use super::Timestamp;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What every secret value reads back as.
pub const SECRET_MASK: &str = "********";

/// `GET /settings/llm`. Secret values read back as [`SECRET_MASK`].
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LlmSettings {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// [`SECRET_MASK`] when a key is stored, else null.
    pub api_key: Option<String>,
    /// Header names, each with [`SECRET_MASK`] as its value.
    pub extra_headers: BTreeMap<String, String>,
    pub updated_at: Option<Timestamp>,
}

/// `PUT /settings/llm`: replaces the settings. A secret sent as
/// [`SECRET_MASK`] keeps the stored value; an absent one is removed.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PutLlmSettings {
    pub provider: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_headers: Option<BTreeMap<String, String>>,
}
