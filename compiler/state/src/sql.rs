//! The statements both state backends run: one small interface, [`Sql`], that the ledger,
//! the budget's leases, the build journal and the eval series write through, so that one
//! piece of code serves SQLite (the embedded store) and PostgreSQL (design:
//! state.backends). A statement is written once, in the subset both accept, with `?N`
//! placeholders (spelled `$N` for PostgreSQL by its connection); where a backend needs its
//! own words (a row lock, JSON), the caller asks [`Sql::dialect`]. Arguments are borrowed
//! ([`Arg`]), rows come back owned ([`Row`]), and every failure is a [`StateError`].
//! design: state.backends

use rusqlite::types::{ToSqlOutput, ValueRef};

use crate::dialect::Dialect;
use crate::error::StateError;

/// One statement argument.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arg<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a str),
}

impl From<i64> for Arg<'_> {
    fn from(v: i64) -> Self {
        Arg::Int(v)
    }
}

impl From<u32> for Arg<'_> {
    fn from(v: u32) -> Self {
        Arg::Int(i64::from(v))
    }
}

impl From<u64> for Arg<'_> {
    /// Saturating: no count specc keeps comes near 2^63.
    fn from(v: u64) -> Self {
        Arg::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl From<usize> for Arg<'_> {
    fn from(v: usize) -> Self {
        Arg::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl From<bool> for Arg<'_> {
    fn from(v: bool) -> Self {
        Arg::Int(i64::from(v))
    }
}

impl From<f64> for Arg<'_> {
    fn from(v: f64) -> Self {
        Arg::Real(v)
    }
}

impl<'a> From<&'a str> for Arg<'a> {
    fn from(v: &'a str) -> Self {
        Arg::Text(v)
    }
}

impl<'a> From<&'a String> for Arg<'a> {
    fn from(v: &'a String) -> Self {
        Arg::Text(v)
    }
}

impl<'a, T: Into<Arg<'a>>> From<Option<T>> for Arg<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Arg::Null, Into::into)
    }
}

/// The arguments of a statement: `args![run, task, attempt]`.
#[macro_export]
macro_rules! args {
    ($($a:expr),* $(,)?) => { &[$($crate::Arg::from($a)),*] };
}

/// One stored value, owned.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl From<Arg<'_>> for Value {
    fn from(a: Arg<'_>) -> Value {
        match a {
            Arg::Null => Value::Null,
            Arg::Int(v) => Value::Int(v),
            Arg::Real(v) => Value::Real(v),
            Arg::Text(v) => Value::Text(v.to_owned()),
        }
    }
}

/// One result row. Its getters convert as the backends differ: an integer read as a real
/// (`SUM` of integers), a whole real read as an integer.
#[derive(Clone, Debug, PartialEq)]
pub struct Row(pub Vec<Value>);

fn decode(i: usize, wanted: &str, got: &Value) -> StateError {
    StateError::Decode(format!("column {i} should be {wanted}, it is {got:?}"))
}

impl Row {
    fn at(&self, i: usize) -> Result<&Value, StateError> {
        self.0
            .get(i)
            .ok_or_else(|| StateError::Decode(format!("no column {i}")))
    }

    pub fn opt_int(&self, i: usize) -> Result<Option<i64>, StateError> {
        match self.at(i)? {
            Value::Null => Ok(None),
            Value::Int(v) => Ok(Some(*v)),
            Value::Real(f) if f.fract() == 0.0 => Ok(Some(*f as i64)),
            other => Err(decode(i, "an integer", other)),
        }
    }

    pub fn int(&self, i: usize) -> Result<i64, StateError> {
        self.opt_int(i)?
            .ok_or_else(|| decode(i, "an integer", &Value::Null))
    }

    /// A count or size: negative values (none are stored) read as 0.
    pub fn u64(&self, i: usize) -> Result<u64, StateError> {
        Ok(u64::try_from(self.int(i)?).unwrap_or(0))
    }

    pub fn u32(&self, i: usize) -> Result<u32, StateError> {
        let v = self.int(i)?;
        u32::try_from(v).map_err(|_| decode(i, "a small count", &Value::Int(v)))
    }

    pub fn opt_real(&self, i: usize) -> Result<Option<f64>, StateError> {
        match self.at(i)? {
            Value::Null => Ok(None),
            Value::Int(v) => Ok(Some(*v as f64)),
            Value::Real(f) => Ok(Some(*f)),
            other => Err(decode(i, "a number", other)),
        }
    }

    pub fn real(&self, i: usize) -> Result<f64, StateError> {
        self.opt_real(i)?
            .ok_or_else(|| decode(i, "a number", &Value::Null))
    }

    pub fn opt_text(&self, i: usize) -> Result<Option<String>, StateError> {
        match self.at(i)? {
            Value::Null => Ok(None),
            Value::Text(s) => Ok(Some(s.clone())),
            other => Err(decode(i, "text", other)),
        }
    }

    pub fn text(&self, i: usize) -> Result<String, StateError> {
        self.opt_text(i)?
            .ok_or_else(|| decode(i, "text", &Value::Null))
    }

    pub fn flag(&self, i: usize) -> Result<bool, StateError> {
        Ok(self.int(i)? != 0)
    }
}

/// A connection to the state database, on either backend. The state database's one writer
/// (`StateDb`) owns transactions: a write runs inside one, a read as it is given.
pub trait Sql {
    fn dialect(&self) -> Dialect;

    /// Runs a statement; returns the rows it changed.
    fn execute(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64, StateError>;

    /// Runs a query; returns its rows.
    fn query(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Vec<Row>, StateError>;

    /// Runs statements separated by `;`, with no arguments (a migration, a transaction's
    /// start or end).
    fn batch(&mut self, sql: &str) -> Result<(), StateError>;

    /// The first row of a query, if any.
    fn query_opt(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Option<Row>, StateError> {
        Ok(self.query(sql, args)?.into_iter().next())
    }

    /// The one row a query returns (an aggregate's).
    fn query_one(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Row, StateError> {
        self.query_opt(sql, args)?
            .ok_or_else(|| StateError::Decode(format!("no row from `{sql}`")))
    }
}

impl rusqlite::ToSql for Arg<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        use rusqlite::types::Value as V;
        Ok(match *self {
            Arg::Null => ToSqlOutput::Owned(V::Null),
            Arg::Int(v) => ToSqlOutput::Owned(V::Integer(v)),
            Arg::Real(v) => ToSqlOutput::Owned(V::Real(v)),
            Arg::Text(v) => ToSqlOutput::Borrowed(ValueRef::Text(v.as_bytes())),
        })
    }
}

fn lite_value(v: ValueRef<'_>) -> Result<Value, StateError> {
    Ok(match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(t) => Value::Text(
            std::str::from_utf8(t)
                .map_err(|e| StateError::Decode(format!("text that is not UTF-8: {e}")))?
                .to_owned(),
        ),
        ValueRef::Blob(_) => return Err(StateError::Decode("a blob".into())),
    })
}

impl Sql for rusqlite::Connection {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn execute(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64, StateError> {
        let n = self
            .prepare_cached(sql)?
            .execute(rusqlite::params_from_iter(args))?;
        Ok(n as u64)
    }

    fn query(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Vec<Row>, StateError> {
        let mut q = self.prepare_cached(sql)?;
        let width = q.column_count();
        let mut rows = q.query(rusqlite::params_from_iter(args))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let mut row = Vec::with_capacity(width);
            for i in 0..width {
                row.push(lite_value(r.get_ref(i)?)?);
            }
            out.push(Row(row));
        }
        Ok(out)
    }

    fn batch(&mut self, sql: &str) -> Result<(), StateError> {
        Ok(self.execute_batch(sql)?)
    }
}

/// `sql` with its `?N` placeholders spelled `$N` (PostgreSQL's). No statement of specc's
/// has a `?` in a literal.
pub fn dollar_placeholders(sql: &str) -> String {
    let bytes = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    for (i, ch) in sql.char_indices() {
        if ch == '?' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(ch);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_spelled_for_postgres() {
        assert_eq!(
            dollar_placeholders("SELECT a FROM t WHERE b = ?1 AND c = ?12 OR d = ?"),
            "SELECT a FROM t WHERE b = $1 AND c = $12 OR d = ?"
        );
    }

    #[test]
    fn rows_convert_between_integers_and_reals() {
        let r = Row(vec![
            Value::Int(3),
            Value::Real(2.0),
            Value::Real(2.5),
            Value::Null,
            Value::Text("x".into()),
        ]);
        assert_eq!(r.real(0), Ok(3.0));
        assert_eq!(r.int(1), Ok(2));
        assert!(matches!(r.int(2), Err(StateError::Decode(_))));
        assert_eq!(r.opt_text(3), Ok(None));
        assert!(matches!(r.text(3), Err(StateError::Decode(_))));
        assert_eq!(r.text(4).as_deref(), Ok("x"));
        assert!(matches!(r.int(9), Err(StateError::Decode(_))));
    }

    #[test]
    fn sqlite_runs_statements_with_borrowed_arguments() {
        let mut conn = rusqlite::Connection::open_in_memory().expect("open");
        let c: &mut dyn Sql = &mut conn;
        c.batch("CREATE TABLE t (a TEXT, b INTEGER, c REAL)")
            .expect("table");
        let name = String::from("one");
        let n = c
            .execute(
                "INSERT INTO t VALUES (?1, ?2, ?3)",
                args![&name, 7u32, Some(1.5)],
            )
            .expect("insert");
        assert_eq!(n, 1);
        c.execute(
            "INSERT INTO t VALUES (?1, ?2, ?3)",
            args!["two", None::<i64>, None::<f64>],
        )
        .expect("insert nulls");
        let rows = c
            .query("SELECT a, b, c FROM t ORDER BY a", &[])
            .expect("rows");
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].text(0).as_deref(), Ok("one"));
        assert_eq!(rows[0].u32(1), Ok(7));
        assert_eq!(rows[1].opt_int(1), Ok(None));
        assert_eq!(
            c.query_opt("SELECT a FROM t WHERE a = ?1", args!["none"])
                .expect("none"),
            None
        );
    }
}
