//! `--embedded`: this same binary started as a child `orch serve` on a free
//! loopback port, over a temporary SQLite directory or a fresh PostgreSQL
//! database (created for the run and dropped after), with a known bootstrap
//! admin key and the rate limiter off. Client and server do not share a
//! process, so the server's memory (VmHWM) can be reported on its own.

use anyhow::{Context, Result, bail};
use orchestrator_client::Client;
use sqlx::Connection;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// A child server, killed (and its database dropped) on [`Embedded::stop`].
#[derive(Debug)]
pub struct Embedded {
    /// Behind a lock so a workload holding `&Embedded` can restart it.
    child: std::sync::Mutex<Child>,
    /// What `orch serve` was started with, for [`Embedded::restart`].
    args: Vec<String>,
    pub url: String,
    pub api_key: String,
    pub backend: &'static str,
    _data_dir: Option<tempfile::TempDir>,
    /// `(admin URL, database name)` of a database made for this run.
    pg_database: Option<(String, String)>,
}

/// Memory of the server process, from `/proc/<pid>/status`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ServerMemory {
    pub pid: u32,
    /// VmHWM: the peak resident set size.
    pub peak_rss_mib: f64,
    /// VmRSS at the end of the run.
    pub rss_mib: f64,
}

impl Embedded {
    /// Starts `orch serve` for `target`: `sqlite` or a `postgres://` URL.
    pub async fn start(target: &str, max_connections: Option<u32>) -> Result<Self> {
        let api_key = format!("orch_admin_{}", Uuid::new_v4().simple());
        let port = free_port()?;
        let url = format!("http://127.0.0.1:{port}");
        let mut args = vec![
            "--listen".to_owned(),
            format!("127.0.0.1:{port}"),
            "--rate-limit-per-minute".to_owned(),
            "0".to_owned(),
        ];
        if let Some(n) = max_connections {
            args.extend(["--max-connections".to_owned(), n.to_string()]);
        }
        let (backend, data_dir, pg_database) = if target == "sqlite" {
            let dir = tempfile::Builder::new()
                .prefix("orch-bench-")
                .tempdir()
                .context("cannot create a temporary data directory")?;
            args.extend([
                "--data-dir".to_owned(),
                dir.path().to_string_lossy().into_owned(),
            ]);
            ("sqlite", Some(dir), None)
        } else if target.starts_with("postgres://") || target.starts_with("postgresql://") {
            let name = format!("orch_bench_{}", Uuid::new_v4().simple());
            let mut conn = sqlx::PgConnection::connect(target)
                .await
                .with_context(|| "cannot connect to PostgreSQL to create the bench database")?;
            // The name is ours: `orch_bench_` and 32 hex digits.
            sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                .execute(&mut conn)
                .await
                .context("cannot create the bench database")?;
            conn.close().await.ok();
            args.extend(["--database-url".to_owned(), with_database(target, &name)?]);
            ("postgres", None, Some((target.to_owned(), name)))
        } else {
            bail!("--embedded takes `sqlite` or a postgres:// URL");
        };
        let child = spawn(&args, &api_key)?;
        let mut embedded = Self {
            child: std::sync::Mutex::new(child),
            args,
            url,
            api_key,
            backend,
            _data_dir: data_dir,
            pg_database,
        };
        if let Err(e) = embedded.wait_ready().await {
            embedded.stop().await;
            return Err(e);
        }
        Ok(embedded)
    }

    /// Stops the server and starts it again on the same database, with
    /// `extra` arguments after the first start's (a later flag wins).
    pub async fn restart(&self, extra: &[String]) -> Result<()> {
        {
            let mut child = self.child();
            let _ = child.kill();
            let _ = child.wait();
        }
        let mut args = self.args.clone();
        args.extend(extra.iter().cloned());
        *self.child() = spawn(&args, &self.api_key)?;
        self.wait_ready().await
    }

    fn child(&self) -> std::sync::MutexGuard<'_, Child> {
        self.child
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn wait_ready(&self) -> Result<()> {
        let client = Client::new(&self.url)?;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let exited = self.child().try_wait()?;
            if let Some(status) = exited {
                bail!("`orch serve` exited during start-up ({status})");
            }
            if client.health().ready().await.is_ok() {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("`orch serve` did not become ready within 30 s");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub fn pid(&self) -> u32 {
        self.child().id()
    }

    /// The SQLite data directory of the run (`orch.db` and its WAL), for
    /// `soak`'s file sizes; `None` on PostgreSQL.
    pub fn data_dir(&self) -> Option<&std::path::Path> {
        self._data_dir.as_ref().map(tempfile::TempDir::path)
    }

    /// The URL of the run's PostgreSQL database, for `soak`'s size and
    /// dead-tuple readings; `None` on SQLite.
    pub fn database_url(&self) -> Option<String> {
        let (admin_url, name) = self.pg_database.as_ref()?;
        with_database(admin_url, name).ok()
    }

    /// Peak and current RSS of the server (Linux only; `None` elsewhere).
    pub fn memory(&self) -> Option<ServerMemory> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        let field = |name: &str| -> Option<f64> {
            let line = status.lines().find(|l| l.starts_with(name))?;
            let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some((kib / 1024.0 * 10.0).round() / 10.0)
        };
        Some(ServerMemory {
            pid: self.pid(),
            peak_rss_mib: field("VmHWM:")?,
            rss_mib: field("VmRSS:")?,
        })
    }

    /// Stops the server and drops the run's PostgreSQL database.
    pub async fn stop(&mut self) {
        {
            let mut child = self.child();
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some((admin_url, name)) = self.pg_database.take()
            && let Ok(mut conn) = sqlx::PgConnection::connect(&admin_url).await
        {
            let _ = sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
            )))
            .execute(&mut conn)
            .await;
            conn.close().await.ok();
        }
    }
}

/// `orch serve` (this same binary) with `args`, the known bootstrap keys and
/// the bench's log settings.
fn spawn(args: &[String], api_key: &str) -> Result<Child> {
    let exe = std::env::current_exe().context("cannot find the orch binary")?;
    Command::new(exe)
        .arg("serve")
        .args(args)
        .env("ORCH_BOOTSTRAP_ADMIN_KEY", api_key)
        // Known, so the server does not print a generated one.
        .env(
            "ORCH_BOOTSTRAP_SERVICE_KEY",
            format!("orch_service_{}", Uuid::new_v4().simple()),
        )
        // `ORCH_BENCH_SERVER_LOG` (e.g. `sqlx::query=debug`, with
        // `ORCH_LOG_FORMAT=json`) profiles the server by its statement
        // log, on this bench's stderr.
        .env(
            "ORCH_LOG",
            std::env::var("ORCH_BENCH_SERVER_LOG").unwrap_or_else(|_| "error".into()),
        )
        .env_remove("ORCH_DATABASE_URL")
        .env_remove("ORCH_DATA_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .context("cannot start `orch serve`")
}

fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("no free port")?;
    Ok(listener.local_addr()?.port())
}

/// `url` with its database path replaced by `name` (query string kept).
fn with_database(url: &str, name: &str) -> Result<String> {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let host_end = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |i| scheme_end + i);
    let mut out = format!("{}/{}", &base[..host_end], name);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn database_name_is_replaced() {
        assert_eq!(
            with_database("postgres://u@h:5432/test?sslmode=disable", "x").unwrap(),
            "postgres://u@h:5432/x?sslmode=disable"
        );
        assert_eq!(
            with_database("postgres://u@h", "x").unwrap(),
            "postgres://u@h/x"
        );
    }
}
