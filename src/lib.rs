//! Test harness for the black-box suite in `tests/`.
//!
//! [`TestServer::start`] boots the real server on `127.0.0.1:0` over a fresh
//! database and hands back its URL, keys and SDK clients:
//!
//! - by default the database is a SQLite file in a temporary directory;
//! - when `ORCH_TEST_DATABASE_URL` names a PostgreSQL server database, each
//!   test gets its own new database on that server (named after the given one
//!   plus a random suffix), dropped when the test server is dropped.
//!
//! So the same suite runs against either backend:
//! `cargo nextest run` (SQLite) and
//! `ORCH_TEST_DATABASE_URL=postgres://... cargo nextest run` (PostgreSQL).

pub mod mcp_servers;
pub mod recording;
pub mod webhook_receiver;

use orchestrator_client::Client;
use orchestrator_client::api::{CreateApiKey, Scope};
use orchestrator_server::{ServerConfig, ServerHandle};
use sqlx::Connection;
use std::path::Path;
use tempfile::TempDir;
use uuid::Uuid;

/// Environment variable naming the PostgreSQL database tests create theirs from.
pub const TEST_DATABASE_ENV: &str = "ORCH_TEST_DATABASE_URL";

/// A running server over its own database.
pub struct TestServer {
    pub url: String,
    pub admin_key: String,
    pub service_key: String,
    handle: Option<ServerHandle>,
    data_dir: TempDir,
    database: Database,
}

enum Database {
    Sqlite,
    Postgres(PostgresDatabase),
}

/// Which backend the suite runs on in this process.
pub fn backend() -> &'static str {
    if postgres_base_url().is_some() {
        "postgres"
    } else {
        "sqlite"
    }
}

fn postgres_base_url() -> Option<String> {
    std::env::var(TEST_DATABASE_ENV)
        .ok()
        .filter(|url| url.starts_with("postgres"))
}

/// A key-creation request of `scope` named `name`, with no expiry or owner.
pub fn key_request(scope: Scope, name: &str) -> CreateApiKey {
    CreateApiKey {
        name: Some(name.into()),
        scope,
        expires_at: None,
        owner_type: None,
        owner_id: None,
        request_id: None,
    }
}

/// A valid, random bootstrap key of `scope`.
pub fn random_key(scope: &str) -> String {
    format!("orch_{scope}_{}", Uuid::new_v4().simple())
}

impl TestServer {
    /// A server with rate limiting off and bootstrap admin and service keys.
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    /// Like [`TestServer::start`], letting the test adjust the configuration.
    pub async fn start_with(configure: impl FnOnce(&mut ServerConfig)) -> Self {
        let data_dir = tempfile::tempdir().expect("temporary directory");
        let database = match postgres_base_url() {
            Some(base) => Database::Postgres(PostgresDatabase::create(&base).await),
            None => Database::Sqlite,
        };
        let url = match &database {
            Database::Sqlite => ServerConfig::sqlite_url(data_dir.path()),
            Database::Postgres(db) => db.url.clone(),
        };
        let admin_key = random_key("admin");
        let service_key = random_key("service");
        let mut config = ServerConfig::new("127.0.0.1:0".parse().unwrap(), url);
        config.rate_limit_per_minute = 0;
        config.core.max_connections = 5;
        config.core.bootstrap_admin_key = Some(admin_key.clone());
        config.core.bootstrap_service_key = Some(service_key.clone());
        // Tests serve git repositories from local paths and loopback ports.
        config.core.allow_private_network = true;
        configure(&mut config);
        let handle = orchestrator_server::start(config)
            .await
            .expect("server starts");
        let url = format!("http://{}", handle.local_addr());
        Self {
            url,
            admin_key,
            service_key,
            handle: Some(handle),
            data_dir,
            database,
        }
    }

    /// The database URL this server uses (to start a second server on it).
    pub fn database_url(&self) -> String {
        match &self.database {
            Database::Sqlite => ServerConfig::sqlite_url(self.data_dir.path()),
            Database::Postgres(db) => db.url.clone(),
        }
    }

    pub fn data_dir(&self) -> &Path {
        self.data_dir.path()
    }

    /// The running server.
    pub fn handle(&self) -> &ServerHandle {
        self.handle.as_ref().expect("server running")
    }

    /// An SDK client with the admin key.
    pub fn admin(&self) -> Client {
        self.client(&self.admin_key)
    }

    /// An SDK client with the service key.
    pub fn service(&self) -> Client {
        self.client(&self.service_key)
    }

    /// An SDK client with `credential` (API key or access token).
    pub fn client(&self, credential: &str) -> Client {
        Client::new(&self.url)
            .expect("client")
            .with_api_key(credential)
    }

    /// A session from exchanging the admin key (access, refresh and CSRF tokens).
    pub async fn admin_session(&self) -> orchestrator_client::Session {
        self.anonymous()
            .auth()
            .token(&self.admin_key, true)
            .await
            .expect("admin token exchange")
    }

    /// An SDK client with no credential.
    pub fn anonymous(&self) -> Client {
        Client::new(&self.url).expect("client")
    }

    /// A plain HTTP client for what the SDK hides (cookies, raw bodies).
    pub fn http(&self) -> reqwest::Client {
        orchestrator_client::install_crypto_provider();
        reqwest::Client::new()
    }

    /// `self.url` + `path`.
    pub fn at(&self, path: &str) -> String {
        format!("{}{}", self.url, path)
    }

    /// One series of `GET /metrics` (read with the admin key), e.g.
    /// `orch_db_write_batches_total`; `None` when the server has no such
    /// series.
    pub async fn metric(&self, series: &str) -> Option<f64> {
        let text = self
            .http()
            .get(self.at("/metrics"))
            .bearer_auth(&self.admin_key)
            .send()
            .await
            .expect("GET /metrics")
            .text()
            .await
            .expect("the metrics text");
        text.lines()
            .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
    }

    /// Stops the server (graceful shutdown), keeping the database.
    pub async fn stop(&mut self) {
        if let Some(handle) = self.handle.take() {
            handle.shutdown().await;
        }
    }

    /// A one-stage playbook named `playbook` and a workspace named
    /// `workspace`, made through the API: what a workflow launch needs.
    pub async fn launch_fixtures(&self, playbook: &str, workspace: &str) -> (Uuid, Uuid) {
        let admin = self.admin();
        let playbook = admin
            .playbooks()
            .create(&orchestrator_client::api::playbooks::CreatePlaybook {
                name: playbook.into(),
                outcome: "done".into(),
                definition: serde_json::json!({ "roles": [{ "name": "dev" }], "stages": [{ "name": "build" }] }),
                slug: None,
                description: None,
                lifecycle: None,
                request_id: None,
            })
            .await
            .expect("create a playbook");
        let workspace = admin
            .workspaces()
            .create(&orchestrator_client::api::workspaces::CreateWorkspace {
                name: workspace.into(),
                ..Default::default()
            })
            .await
            .expect("create a workspace");
        (playbook.id, workspace.id)
    }

    /// A workflow named `name`, launched on fresh fixtures
    /// ([`TestServer::launch_fixtures`], named after it); its id.
    pub async fn launch_workflow(&self, name: &str) -> Uuid {
        let (playbook_id, workspace_id) = self
            .launch_fixtures(&format!("{name} playbook"), &format!("{name} workspace"))
            .await;
        self.admin()
            .workflows()
            .create(&orchestrator_client::api::CreateWorkflow {
                playbook_id,
                workspace_id,
                name: name.into(),
                ..Default::default()
            })
            .await
            .expect("launch a workflow")
            .id
    }
}

/// A per-test PostgreSQL database, dropped with the test server.
struct PostgresDatabase {
    admin_url: String,
    name: String,
    url: String,
}

impl PostgresDatabase {
    async fn create(base: &str) -> Self {
        let (prefix, base_name, query) = split_database_url(base);
        let name = format!(
            "{}_t_{}",
            base_name,
            &Uuid::new_v4().simple().to_string()[..12]
        );
        let mut conn = sqlx::PgConnection::connect(base)
            .await
            .expect("connect to the PostgreSQL test server");
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
            .execute(&mut conn)
            .await
            .expect("create the test database");
        let _ = conn.close().await;
        Self {
            admin_url: base.to_owned(),
            url: format!("{prefix}{name}{query}"),
            name,
        }
    }
}

impl Drop for PostgresDatabase {
    fn drop(&mut self) {
        let admin_url = self.admin_url.clone();
        let name = self.name.clone();
        // Drop runs outside any runtime we may block; use a small one of our own.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                if let Ok(mut conn) = sqlx::PgConnection::connect(&admin_url).await {
                    let _ = sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                        "DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"
                    )))
                    .execute(&mut conn)
                    .await;
                    let _ = conn.close().await;
                }
            });
        })
        .join();
    }
}

/// `postgres://host/db?x` → (`postgres://host/`, `db`, `?x`).
fn split_database_url(url: &str) -> (String, String, String) {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (url, String::new()),
    };
    let slash = base.rfind('/').expect("database URL has a path");
    let name = &base[slash + 1..];
    let name = if name.is_empty() || base[..slash].ends_with('/') {
        "orch".to_owned()
    } else {
        name.to_owned()
    };
    (base[..=slash].to_owned(), name, query)
}
