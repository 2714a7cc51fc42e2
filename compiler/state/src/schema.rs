//! The state database's schema, declared by the tables' owners: the ledger (specc-llm), the
//! journal and the task leases (here), the eval series (specc-runtime). Each owner's
//! [`Tables`] are an ordered list of migrations written once in a portable subset of SQL
//! and spelled for each backend by [`Dialect::spell`]; [`migrate`] brings one owner's
//! tables to its newest version, which `schema_owners` records per owner, so an owner
//! adds a table without knowing anyone else's. A database from before owners kept their
//! own versions (one `schema_version` for all, versions 1 to 3) is read as the owners'
//! steps those versions held, and its `schema_version` is then sealed at
//! [`LEGACY_SEALED`], which a specc from before refuses as newer than it knows.
//! design: state.backends
//! design: state.owners

use crate::args;
use crate::dialect::Dialect;
use crate::error::StateError;
use crate::sql::Sql;

/// One step of an owner's tables.
#[derive(Clone, Copy, Debug)]
pub struct Migration {
    /// The owner's version once the step is made (1, 2, …, in order).
    pub version: i64,
    /// The version of the one schema every owner shared before owners kept their own that
    /// already held this step (`None` for steps made since): a database migrated that far
    /// has it.
    pub legacy: Option<i64>,
    /// Statements separated by `;`, with the dialect's type words (`{id}`, `{int}`,
    /// `{real}`, `{text}`).
    pub sql: &'static str,
}

/// The tables one owner declares.
#[derive(Clone, Copy, Debug)]
pub struct Tables {
    /// The owner's name in `schema_owners`.
    pub owner: &'static str,
    pub migrations: &'static [Migration],
}

impl Tables {
    /// The owner's newest version.
    pub fn newest(&self) -> i64 {
        self.migrations.last().map_or(0, |m| m.version)
    }

    /// How far a database at version `at` of the one shared schema had taken these tables.
    fn at_shared_version(&self, at: i64) -> i64 {
        self.migrations
            .iter()
            .filter(|m| m.legacy.is_some_and(|l| l <= at))
            .map(|m| m.version)
            .max()
            .unwrap_or(0)
    }
}

/// Each owner's version.
const OWNERS_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS schema_owners (owner {text} PRIMARY KEY, version {int} NOT NULL)";

/// The one version every owner shared before (kept only to be sealed).
const LEGACY_TABLE: &str = "CREATE TABLE IF NOT EXISTS schema_version (version {int} NOT NULL)";

/// How far a database went in the one shared schema (0: not at all, or no such table).
const LEGACY_QUERY: &str = "SELECT CAST(COALESCE(MAX(version), 0) AS BIGINT) FROM schema_version";

/// What `schema_version` is set to once owners keep their own versions: past the shared
/// schema's last version (3), so a specc from before refuses the database ("newer than this
/// specc knows") instead of writing to tables it does not know.
pub const LEGACY_SEALED: i64 = 4;

/// The row of `schema_owners` that keeps how far the one shared schema had gone when it was
/// sealed: owners that migrate later read their steps from it.
const SHARED: &str = "shared-schema";

/// An advisory lock key on PostgreSQL: one migrator at a time.
const MIGRATION_LOCK: i64 = 0x5350_4543_4353;

/// Brings `tables` to their newest version, in one transaction with their version row, the
/// version read again inside it (another process may have migrated meanwhile): an
/// immediate one on SQLite, one holding an advisory lock on PostgreSQL (where two processes
/// creating a table at once would collide). A database whose tables of this owner are
/// newer than this specc knows is refused. Tables already at their newest version cost one
/// read and no transaction.
pub fn migrate(sql: &mut dyn Sql, tables: &Tables) -> Result<(), StateError> {
    let newest = tables.newest();
    if has_table(sql, "schema_owners")? {
        match owner_version(sql, tables.owner)? {
            Some(at) if at > newest => return Err(StateError::Open(too_new(tables, at))),
            Some(at) if at == newest => return Ok(()), // the common case
            _ => {}
        }
    }
    let d = sql.dialect();
    sql.batch(d.begin_immediate())?;
    let step = (|| {
        if d == Dialect::Postgres {
            sql.execute("SELECT pg_advisory_xact_lock(?1)", args![MIGRATION_LOCK])?;
        }
        sql.batch(&d.spell(OWNERS_TABLE))?;
        sql.batch(&d.spell(LEGACY_TABLE))?;
        // How far the one shared schema went, as recorded when it was sealed (or now).
        let legacy = sql.query_one(LEGACY_QUERY, &[])?.int(0)?;
        let shared = match owner_version(sql, SHARED)? {
            Some(v) => v,
            None if legacy >= LEGACY_SEALED => 0,
            None => legacy,
        };
        let at = match owner_version(sql, tables.owner)? {
            Some(at) => at,
            None => tables.at_shared_version(shared),
        };
        if at > newest {
            return Err(StateError::Open(too_new(tables, at)));
        }
        for m in tables.migrations.iter().filter(|m| m.version > at) {
            sql.batch(&d.spell(m.sql))?;
        }
        sql.execute(
            "INSERT INTO schema_owners (owner, version) VALUES (?1, ?2)
             ON CONFLICT (owner) DO UPDATE SET version = ?2",
            args![tables.owner, newest],
        )?;
        if legacy < LEGACY_SEALED {
            sql.execute(
                "INSERT INTO schema_owners (owner, version) VALUES (?1, ?2)",
                args![SHARED, shared],
            )?;
            sql.execute(
                "INSERT INTO schema_version (version) VALUES (?1)",
                args![LEGACY_SEALED],
            )?;
        }
        sql.batch("COMMIT")
    })();
    if let Err(e) = step {
        let _ = sql.batch("ROLLBACK");
        return Err(e);
    }
    Ok(())
}

/// The version of `owner`'s tables, if the database records one.
pub fn owner_version(sql: &mut dyn Sql, owner: &str) -> Result<Option<i64>, StateError> {
    sql.query_opt(
        "SELECT version FROM schema_owners WHERE owner = ?1",
        args![owner],
    )?
    .map(|r| r.int(0))
    .transpose()
}

/// Whether the state database has table `name` (a database no build wrote has none).
pub fn has_table(c: &mut dyn Sql, name: &str) -> Result<bool, StateError> {
    match c.dialect() {
        Dialect::Sqlite => Ok(c
            .query_one(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                args![name],
            )?
            .int(0)?
            > 0),
        Dialect::Postgres => c
            .query_one("SELECT to_regclass(?1) IS NOT NULL", args![name])?
            .flag(0),
    }
}

/// Whether table `table` has column `column` (a database read without migrating it may
/// predate the column).
pub fn has_column(c: &mut dyn Sql, table: &str, column: &str) -> Result<bool, StateError> {
    match c.dialect() {
        Dialect::Sqlite => Ok(c
            .query_one(
                "SELECT COUNT(*) FROM pragma_table_info(?1) WHERE name = ?2",
                args![table, column],
            )?
            .int(0)?
            > 0),
        Dialect::Postgres => c
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM information_schema.columns
                   WHERE table_schema = current_schema() AND table_name = ?1
                     AND column_name = ?2)",
                args![table, column],
            )?
            .flag(0),
    }
}

/// Why a database whose `tables` are at version `at`, newer than this specc knows, is
/// refused.
fn too_new(tables: &Tables, at: i64) -> String {
    format!(
        "the state database's {} tables are at version {at}, newer than this specc knows ({}): \
         use a newer specc",
        tables.owner,
        tables.newest()
    )
}

#[cfg(test)]
mod tests;
