//! One PostgreSQL connection used synchronously, as the state database's one writer uses
//! SQLite's (design: state.backends). The writer's callers are synchronous (they hold its
//! lock) and may run on any thread, a tokio worker's included, where blocking on a runtime
//! is not allowed; so the connection lives on a thread of its own, with a current-thread
//! runtime that drives it, and each statement is a message to that thread answered on a
//! channel the caller waits on. Prepared statements are cached there by their text.
//! Transactions are the caller's (`BEGIN` … `COMMIT` through [`Sql::batch`]): the writer's
//! lock keeps one at a time. The thread ends when the connection is dropped.
//! design: state.backends

use std::collections::HashMap;
use std::error::Error;
use std::sync::mpsc;

use bytes::BytesMut;
use tokio_postgres::types::{IsNull, ToSql, Type, to_sql_checked};

use crate::dialect::Dialect;
use crate::error::StateError;
use crate::sql::{Arg, Row, Sql, Value, dollar_placeholders};

/// What a statement is asked to do on the connection's thread.
enum Ask {
    Execute,
    Query,
    Batch,
}

/// A statement for the connection's thread, and where its answer goes.
struct Job {
    ask: Ask,
    sql: String,
    args: Vec<Value>,
    answer: mpsc::SyncSender<Result<Answer, StateError>>,
}

enum Answer {
    Changed(u64),
    Rows(Vec<Row>),
    Done,
}

/// A synchronous connection to a PostgreSQL state database.
pub(crate) struct PgConn {
    jobs: tokio::sync::mpsc::UnboundedSender<Job>,
}

impl PgConn {
    /// Connects with `config` (its password is never logged). Nothing is created or
    /// migrated: the state database's writer migrates (each owner's `crate::schema::migrate`).
    pub(crate) fn connect(config: tokio_postgres::Config) -> Result<PgConn, StateError> {
        let (jobs, inbox) = tokio::sync::mpsc::unbounded_channel::<Job>();
        let (ready, connected) = mpsc::sync_channel::<Result<(), StateError>>(1);
        std::thread::Builder::new()
            .name("specc-pg".into())
            .spawn(move || serve(config, inbox, ready))
            .map_err(|e| StateError::Open(format!("no thread for PostgreSQL: {e}")))?;
        connected
            .recv()
            .map_err(|_| StateError::Open("the PostgreSQL thread ended".into()))??;
        Ok(PgConn { jobs })
    }

    fn ask(&self, ask: Ask, sql: &str, args: &[Arg<'_>]) -> Result<Answer, StateError> {
        let (answer, reply) = mpsc::sync_channel(1);
        let job = Job {
            ask,
            sql: sql.to_owned(),
            args: args.iter().map(|a| Value::from(*a)).collect(),
            answer,
        };
        let gone = || StateError::Open("the PostgreSQL connection is closed".into());
        self.jobs.send(job).map_err(|_| gone())?;
        reply.recv().map_err(|_| gone())?
    }
}

impl Sql for PgConn {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn execute(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64, StateError> {
        match self.ask(Ask::Execute, sql, args)? {
            Answer::Changed(n) => Ok(n),
            _ => Ok(0),
        }
    }

    fn query(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Vec<Row>, StateError> {
        match self.ask(Ask::Query, sql, args)? {
            Answer::Rows(rows) => Ok(rows),
            _ => Ok(Vec::new()),
        }
    }

    fn batch(&mut self, sql: &str) -> Result<(), StateError> {
        self.ask(Ask::Batch, sql, &[]).map(drop)
    }
}

/// The connection's thread: connect, then answer jobs until the sender is gone.
fn serve(
    config: tokio_postgres::Config,
    mut inbox: tokio::sync::mpsc::UnboundedReceiver<Job>,
    ready: mpsc::SyncSender<Result<(), StateError>>,
) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready.send(Err(StateError::Open(format!("no runtime: {e}"))));
            return;
        }
    };
    rt.block_on(async move {
        let client = match config.connect(tokio_postgres::NoTls).await {
            Ok((client, connection)) => {
                tokio::spawn(async move {
                    if let Err(e) = connection.await {
                        tracing::warn!(error = %e, "the PostgreSQL state connection ended");
                    }
                });
                client
            }
            Err(e) => {
                let _ = ready.send(Err(e.into()));
                return;
            }
        };
        if ready.send(Ok(())).is_err() {
            return;
        }
        let mut prepared: HashMap<String, tokio_postgres::Statement> = HashMap::new();
        while let Some(job) = inbox.recv().await {
            let answer = run(&client, &mut prepared, &job).await;
            let _ = job.answer.send(answer);
        }
    });
}

async fn run(
    client: &tokio_postgres::Client,
    prepared: &mut HashMap<String, tokio_postgres::Statement>,
    job: &Job,
) -> Result<Answer, StateError> {
    if let Ask::Batch = job.ask {
        client.batch_execute(&job.sql).await?;
        return Ok(Answer::Done);
    }
    let statement = match prepared.get(&job.sql) {
        Some(s) => s.clone(),
        None => {
            let s = client.prepare(&dollar_placeholders(&job.sql)).await?;
            prepared.insert(job.sql.clone(), s.clone());
            s
        }
    };
    let params: Vec<&(dyn ToSql + Sync)> = job.args.iter().map(|a| a as _).collect();
    match job.ask {
        Ask::Execute => Ok(Answer::Changed(client.execute(&statement, &params).await?)),
        _ => {
            let rows = client.query(&statement, &params).await?;
            rows.iter()
                .map(row_of)
                .collect::<Result<_, _>>()
                .map(Answer::Rows)
        }
    }
}

fn row_of(r: &tokio_postgres::Row) -> Result<Row, StateError> {
    let mut out = Vec::with_capacity(r.len());
    for (i, column) in r.columns().iter().enumerate() {
        let ty = column.type_();
        let v = if *ty == Type::INT8 {
            r.try_get::<_, Option<i64>>(i)?.map(Value::Int)
        } else if *ty == Type::INT4 {
            r.try_get::<_, Option<i32>>(i)?
                .map(|v| Value::Int(i64::from(v)))
        } else if *ty == Type::INT2 {
            r.try_get::<_, Option<i16>>(i)?
                .map(|v| Value::Int(i64::from(v)))
        } else if *ty == Type::BOOL {
            r.try_get::<_, Option<bool>>(i)?
                .map(|v| Value::Int(i64::from(v)))
        } else if *ty == Type::FLOAT8 {
            r.try_get::<_, Option<f64>>(i)?.map(Value::Real)
        } else if *ty == Type::FLOAT4 {
            r.try_get::<_, Option<f32>>(i)?
                .map(|v| Value::Real(f64::from(v)))
        } else if [Type::TEXT, Type::VARCHAR, Type::NAME, Type::BPCHAR].contains(ty) {
            r.try_get::<_, Option<String>>(i)?.map(Value::Text)
        } else {
            return Err(StateError::Decode(format!(
                "column `{}` is of type {ty}, which specc does not read (cast it)",
                column.name()
            )));
        };
        out.push(v.unwrap_or(Value::Null));
    }
    Ok(Row(out))
}

impl ToSql for Value {
    /// Spelled as the parameter's type asks: PostgreSQL infers each parameter's type from
    /// the statement, where SQLite takes any value anywhere.
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        let wrong = || -> Box<dyn Error + Sync + Send> {
            format!("{self:?} given for a parameter of type {ty}").into()
        };
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(v) => match *ty {
                Type::INT8 => v.to_sql(ty, out),
                Type::INT4 => i32::try_from(*v)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*v)?.to_sql(ty, out),
                Type::FLOAT8 => (*v as f64).to_sql(ty, out),
                Type::FLOAT4 => (*v as f32).to_sql(ty, out),
                Type::BOOL => (*v != 0).to_sql(ty, out),
                Type::TEXT | Type::VARCHAR => v.to_string().to_sql(ty, out),
                _ => Err(wrong()),
            },
            Value::Real(v) => match *ty {
                Type::FLOAT8 => v.to_sql(ty, out),
                Type::FLOAT4 => (*v as f32).to_sql(ty, out),
                Type::INT8 if v.fract() == 0.0 => (*v as i64).to_sql(ty, out),
                _ => Err(wrong()),
            },
            Value::Text(s) => s.as_str().to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}
