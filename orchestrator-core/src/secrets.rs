//! The master key and what is derived from it: the access-token signing key,
//! the key that binds CSRF tokens to sessions, and the key that encrypts
//! secrets at rest.
//!
//! The master key comes from configuration (`ORCH_SECRET_KEY`) when given.
//! Otherwise the first start generates one and stores it in the database, so
//! every replica of a PostgreSQL deployment signs and decrypts alike. Giving
//! it in configuration keeps it away from the data it protects, which is what
//! production deployments should do.

use crate::error::{Error, Result};
use crate::store::{Access, Store, is_unique_violation, on_db};
use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use rand::RngExt;
use rand::distr::Alphanumeric;
use sha2::{Digest, Sha256};
use uuid::Uuid;

const MASTER_KEY_ROW: &str = "master_key";
const CIPHERTEXT_VERSION: &str = "v1.";

/// Key material for one deployment.
#[derive(Clone)]
pub struct Secrets {
    signing_key: [u8; 32],
    csrf_key: [u8; 32],
    cipher: Aes256Gcm,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secrets(..)")
    }
}

impl Secrets {
    /// Derives the keys from a master secret (any string; its SHA-256 is used).
    pub fn from_master(master: &str) -> Self {
        let signing_key = derive(master, b"orch access-token signing v1");
        let csrf_key = derive(master, b"orch session csrf binding v1");
        let cipher_key = derive(master, b"orch encryption at rest v1");
        let cipher = Aes256Gcm::new_from_slice(&cipher_key).expect("32-byte key");
        Self {
            signing_key,
            csrf_key,
            cipher,
        }
    }

    /// The configured master key, or the one stored in the database (created
    /// on the first start).
    pub async fn load(store: &Store, configured: Option<&str>) -> Result<Self> {
        if let Some(master) = configured.filter(|m| !m.is_empty()) {
            return Ok(Self::from_master(master));
        }
        let mut conn = store.read().await?;
        if let Some(master) = stored_master(&mut conn).await? {
            return Ok(Self::from_master(&master));
        }
        drop(conn);
        let mut bytes = [0u8; 32];
        rand::rng().fill(&mut bytes);
        let generated = STANDARD.encode(bytes);
        let mut tx = store.begin().await?;
        let inserted = on_db!(&mut tx, c => sqlx::query(
            "INSERT INTO server_secrets (name, value, created_at) VALUES ($1, $2, $3)",
        )
        .bind(MASTER_KEY_ROW)
        .bind(&generated)
        .bind(store.now().as_datetime())
        .execute(c).await.map(|r| r.rows_affected()));
        match inserted {
            Ok(_) => {
                tx.commit().await?;
                Ok(Self::from_master(&generated))
            }
            // Another replica won the race: use its key.
            Err(e) if is_unique_violation(&e) => {
                drop(tx);
                let mut conn = store.read().await?;
                let master = stored_master(&mut conn)
                    .await?
                    .ok_or_else(|| Error::internal("master key vanished"))?;
                Ok(Self::from_master(&master))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The HMAC key for access tokens.
    pub fn signing_key(&self) -> &[u8] {
        &self.signing_key
    }

    /// The CSRF token of session `session_id`: HMAC-SHA256 of the id under a
    /// key only the server holds, so it cannot be made up for another session
    /// and stays the same across refreshes of one session.
    pub fn csrf_token(&self, session_id: Uuid) -> String {
        let mut message = b"csrf:".to_vec();
        message.extend_from_slice(session_id.as_bytes());
        URL_SAFE_NO_PAD.encode(hmac_sha256(&self.csrf_key, &message))
    }

    /// Encrypts `plaintext` bound to `context` (which must be given again to
    /// decrypt, so a ciphertext cannot be moved to another record).
    pub fn encrypt(&self, plaintext: &[u8], context: &[u8]) -> String {
        let mut nonce_bytes = [0u8; 12];
        rand::rng().fill(&mut nonce_bytes);
        let nonce = Nonce::from(nonce_bytes);
        let sealed = self
            .cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: plaintext,
                    aad: context,
                },
            )
            .expect("AES-GCM encryption of an in-memory buffer cannot fail");
        let mut out = nonce_bytes.to_vec();
        out.extend_from_slice(&sealed);
        format!("{CIPHERTEXT_VERSION}{}", URL_SAFE_NO_PAD.encode(out))
    }

    /// Reverses [`Secrets::encrypt`].
    pub fn decrypt(&self, sealed: &str, context: &[u8]) -> Result<Vec<u8>> {
        let body = sealed
            .strip_prefix(CIPHERTEXT_VERSION)
            .ok_or_else(|| Error::internal("unknown ciphertext version"))?;
        let raw = URL_SAFE_NO_PAD.decode(body).map_err(Error::internal)?;
        if raw.len() < 12 {
            return Err(Error::internal("ciphertext too short"));
        }
        let (nonce_bytes, ciphertext) = raw.split_at(12);
        let nonce_array: [u8; 12] = nonce_bytes.try_into().expect("12 bytes");
        self.cipher
            .decrypt(
                &Nonce::from(nonce_array),
                Payload {
                    msg: ciphertext,
                    aad: context,
                },
            )
            .map_err(|_| Error::internal("ciphertext does not decrypt with this deployment's key"))
    }
}

async fn stored_master(conn: &mut impl Access) -> Result<Option<String>> {
    let row: Option<(String,)> = on_db!(conn, c => sqlx::query_as("SELECT value FROM server_secrets WHERE name = $1")
        .bind(MASTER_KEY_ROW)
        .fetch_optional(c)
        .await)?;
    Ok(row.map(|(value,)| value))
}

fn derive(master: &str, label: &[u8]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(label);
    hasher.update([0u8]);
    hasher.update(master.as_bytes());
    hasher.finalize().into()
}

/// HMAC-SHA256 (RFC 2104) of `message` under `key`, by RustCrypto's `hmac`.
pub(crate) fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    use hmac::{KeyInit, Mac};
    let mut mac = hmac::Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(message);
    mac.finalize().into_bytes().into()
}

/// Compares two byte strings in time that depends only on their lengths.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `len` random base62 characters from the operating system's CSPRNG.
pub fn random_base62(len: usize) -> String {
    rand::rng()
        .sample_iter(Alphanumeric)
        .take(len)
        .map(char::from)
        .collect()
}

/// Lower-case hex SHA-256 of `input`: how keys and refresh tokens are stored.
pub fn sha256_hex(input: &str) -> String {
    let digest = Sha256::digest(input.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encryption_round_trips_and_binds_context() {
        let secrets = Secrets::from_master("test master");
        let sealed = secrets.encrypt(b"token", b"workspace:1");
        assert!(sealed.starts_with("v1."));
        assert_eq!(secrets.decrypt(&sealed, b"workspace:1").unwrap(), b"token");
        assert!(secrets.decrypt(&sealed, b"workspace:2").is_err());
        assert!(
            Secrets::from_master("other")
                .decrypt(&sealed, b"workspace:1")
                .is_err()
        );
    }

    #[test]
    fn hmac_matches_rfc_4231_and_csrf_tokens_are_per_session_and_key() {
        let hex = |bytes: [u8; 32]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
        assert_eq!(
            hex(hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(
            hex(hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
        let secrets = Secrets::from_master("a");
        let session = Uuid::new_v4();
        assert_eq!(secrets.csrf_token(session), secrets.csrf_token(session));
        assert_ne!(
            secrets.csrf_token(session),
            secrets.csrf_token(Uuid::new_v4())
        );
        assert_ne!(
            secrets.csrf_token(session),
            Secrets::from_master("b").csrf_token(session)
        );
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd") && !constant_time_eq(b"abc", b"ab"));
    }

    #[test]
    fn random_base62_has_the_asked_length_and_alphabet() {
        let token = random_base62(32);
        assert_eq!(token.len(), 32);
        assert!(token.chars().all(|c| c.is_ascii_alphanumeric()));
    }
}
