//! The journal's tables (design: state.owners): runs, their tasks and attempts, each
//! attempt's steps and opening messages, what landed in any run, the texts the seed wrote,
//! and the follow-ups a run added.
//! design: runtime.journal

use crate::schema::{Migration, Tables};

/// The journal's tables and their migrations.
pub const JOURNAL: Tables = Tables {
    owner: "journal",
    migrations: &[
        Migration {
            version: 1,
            legacy: Some(1),
            sql: V1,
        },
        Migration {
            version: 2,
            legacy: Some(3),
            sql: V2,
        },
        Migration {
            version: 3,
            legacy: None,
            sql: V3,
        },
        Migration {
            version: 4,
            legacy: None,
            sql: V4,
        },
        Migration {
            version: 5,
            legacy: None,
            sql: V5,
        },
    ],
};

const V1: &str = "
CREATE TABLE IF NOT EXISTS runs (
    run {text} PRIMARY KEY, spec {text} NOT NULL, started_unix {int} NOT NULL,
    finished_unix {int}, status {text} NOT NULL);
CREATE TABLE IF NOT EXISTS tasks (
    run {text} NOT NULL, task {text} NOT NULL, title {text} NOT NULL,
    fingerprint {text} NOT NULL, state {text} NOT NULL, reason {text},
    commit_id {text}, PRIMARY KEY (run, task));
CREATE TABLE IF NOT EXISTS attempts (
    run {text} NOT NULL, task {text} NOT NULL, attempt {int} NOT NULL,
    role {text} NOT NULL, base {text} NOT NULL, state {text} NOT NULL, reason {text},
    started_unix {int} NOT NULL, finished_unix {int},
    PRIMARY KEY (run, task, attempt));
CREATE TABLE IF NOT EXISTS steps (
    run {text} NOT NULL, task {text} NOT NULL, attempt {int} NOT NULL,
    step {int} NOT NULL, kind {text} NOT NULL, body {text} NOT NULL,
    PRIMARY KEY (run, task, attempt, step));
CREATE TABLE IF NOT EXISTS landed (
    task {text} PRIMARY KEY, fingerprint {text} NOT NULL, commit_id {text},
    run {text} NOT NULL);
CREATE TABLE IF NOT EXISTS seeded (path {text} PRIMARY KEY, text {text} NOT NULL);
CREATE TABLE IF NOT EXISTS followups (
    run {text} NOT NULL, task {text} NOT NULL, why {text} NOT NULL,
    work_order {text} NOT NULL, PRIMARY KEY (run, task))";

/// What SQLite's `rowid` ordered, kept in columns both backends have: the order a run's
/// follow-ups were added in (`seq`), and when a task last landed (`landed_ms`, ms since the
/// epoch), for `specc status`'s latest landings.
const V2: &str = "
ALTER TABLE followups ADD COLUMN seq {int};
ALTER TABLE tasks ADD COLUMN landed_ms {int}";

/// What each attempt was told: its opening messages as sent (a JSON list), for
/// `specc show` (design: driver.show).
const V3: &str = "
CREATE TABLE IF NOT EXISTS contexts (
    run {text} NOT NULL, task {text} NOT NULL, attempt {int} NOT NULL,
    messages {text} NOT NULL, PRIMARY KEY (run, task, attempt))";

/// Decisions a worker's contest settled while a build ran: what later tasks read (design:
/// runtime.contested-decisions).
const V4: &str = "
CREATE TABLE IF NOT EXISTS settled (
    decision {text} PRIMARY KEY, text {text} NOT NULL, rationale {text} NOT NULL,
    replaced {text} NOT NULL, by_task {text} NOT NULL, attempt {int} NOT NULL,
    evidence {text} NOT NULL, run {text} NOT NULL)";

/// When each attempt started and ended, in ms since the epoch: the swarm's timeline in
/// `specc report` (design: eval.report).
const V5: &str = "
ALTER TABLE attempts ADD COLUMN started_ms {int};
ALTER TABLE attempts ADD COLUMN finished_ms {int}";
