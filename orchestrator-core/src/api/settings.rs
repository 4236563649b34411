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
    /// The LLM provider's name (`openai`, `anthropic`, ...); null when nothing
    /// is set.
    pub provider: Option<String>,
    /// The model claimed tasks should use.
    pub model: Option<String>,
    /// The provider's API base URL, when not the provider's default.
    pub base_url: Option<String>,
    /// [`SECRET_MASK`] when a key is stored, else null.
    pub api_key: Option<String>,
    /// Header names, each with [`SECRET_MASK`] as its value.
    pub extra_headers: BTreeMap<String, String>,
    /// When the settings were last replaced; null when never set.
    pub updated_at: Option<Timestamp>,
}

/// `PUT /settings/llm`: replaces the settings. A secret sent as
/// [`SECRET_MASK`] keeps the stored value; an absent one is removed.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PutLlmSettings {
    /// The LLM provider's name (`openai`, `anthropic`, ...).
    pub provider: String,
    /// The model claimed tasks should use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The provider's API base URL, when not the provider's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The provider's API key, sealed at rest; [`SECRET_MASK`] keeps the stored
    /// key, absent removes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// Extra headers sent to the provider, name to value, sealed at rest; a
    /// value of [`SECRET_MASK`] keeps the stored one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_headers: Option<BTreeMap<String, String>>,
}
