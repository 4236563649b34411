//! Webhook secrets and the Standard Webhooks signature.
//!
//! A secret is `whsec_` + base64 of 32 random bytes; the signing key is the
//! decoded bytes. The signature of a delivery is `v1,` + base64 of
//! HMAC-SHA256 over `"<webhook-id>.<webhook-timestamp>.<body>"`; while a
//! rotation's old secret is still valid, the header carries both,
//! separated by a space.

use crate::api::WEBHOOK_SECRET_PREFIX;
use crate::error::{Error, Result};
use crate::secrets::hmac_sha256;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rand::RngExt;

/// A fresh secret.
pub(crate) fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill(&mut bytes);
    format!("{WEBHOOK_SECRET_PREFIX}{}", STANDARD.encode(bytes))
}

/// The signing key of `secret`.
fn key_of(secret: &str) -> Result<Vec<u8>> {
    let encoded = secret.strip_prefix(WEBHOOK_SECRET_PREFIX).unwrap_or(secret);
    STANDARD
        .decode(encoded)
        .map_err(|_| Error::internal("a stored webhook secret is not base64"))
}

/// The `webhook-signature` header for one delivery attempt, signed with
/// each of `secrets` (the current one first).
pub(crate) fn signature_header(
    secrets: &[&str],
    id: &str,
    timestamp: i64,
    body: &[u8],
) -> Result<String> {
    let mut message = format!("{id}.{timestamp}.").into_bytes();
    message.extend_from_slice(body);
    let mut parts = Vec::with_capacity(secrets.len());
    for secret in secrets {
        let mac = hmac_sha256(&key_of(secret)?, &message);
        parts.push(format!("v1,{}", STANDARD.encode(mac)));
    }
    Ok(parts.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_is_prefixed_base64_of_32_bytes_and_signs_per_secret() {
        let secret = new_secret();
        let decoded = key_of(&secret).unwrap();
        assert_eq!(decoded.len(), 32);
        assert!(secret.starts_with("whsec_"));
        let one = signature_header(&[&secret], "msg_1", 1_700_000_000, b"{}").unwrap();
        assert!(one.starts_with("v1,") && !one.contains(' '));
        let other = new_secret();
        let both = signature_header(&[&secret, &other], "msg_1", 1_700_000_000, b"{}").unwrap();
        assert_eq!(both.split(' ').next(), Some(one.as_str()));
        assert_eq!(both.split(' ').count(), 2);
    }
}
