//! A PostgreSQL database of a test's own, for the `orch db` tests that
//! need an empty target or a database to damage.

use sqlx::Connection;

/// A database of its own on the test PostgreSQL server, dropped at the end.
pub struct PgDatabase {
    admin_url: String,
    pub name: String,
    pub url: String,
}

impl PgDatabase {
    /// Creates a database named `orch_copy_...` on the server of `base`.
    pub async fn create(base: &str) -> Self {
        let name = format!(
            "orch_copy_{}",
            &uuid::Uuid::new_v4().simple().to_string()[..12]
        );
        let mut conn = sqlx::PgConnection::connect(base).await.expect("PostgreSQL");
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
            .execute(&mut conn)
            .await
            .unwrap();
        conn.close().await.unwrap();
        let (path, query) = base.split_once('?').map_or((base, ""), |(p, q)| (p, q));
        let prefix = &path[..path.rfind('/').unwrap() + 1];
        let url = if query.is_empty() {
            format!("{prefix}{name}")
        } else {
            format!("{prefix}{name}?{query}")
        };
        Self {
            admin_url: base.to_owned(),
            name,
            url,
        }
    }

    /// Drops the database (closing its connections).
    pub async fn drop_it(self) {
        let mut conn = sqlx::PgConnection::connect(&self.admin_url).await.unwrap();
        let sql = format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name);
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
            .execute(&mut conn)
            .await
            .unwrap();
    }
}
