//! The recorded run behind `specc cost`'s tests: six calls of several roles whose answers
//! `fixtures/llm/recorded-run/recording.jsonl` holds (written from these by
//! `scripts/regenerate-fixtures.sh`). The answers and usage are written by hand.

use specc_llm::{LlmConfig, Message, Request, Role, Usage};

/// One call: who asks, for which task, what, and the answer and usage recorded for it.
pub struct RecordedCall {
    pub role: Role,
    pub task: &'static str,
    pub prompt: &'static str,
    pub answer: &'static str,
    pub usage: Usage,
}

/// The calls of the recorded run.
pub const CALLS: &[RecordedCall] = &[
    RecordedCall {
        role: Role::Planner,
        task: "root",
        prompt: "Plan the key-value store.",
        answer: "plan: storage, network, replication",
        usage: Usage {
            input: 9_000,
            cached_input: 0,
            output: 1_800,
        },
    },
    RecordedCall {
        role: Role::Planner,
        task: "storage",
        prompt: "Plan storage.",
        answer: "plan: pages, log",
        usage: Usage {
            input: 4_000,
            cached_input: 6_000,
            output: 900,
        },
    },
    RecordedCall {
        role: Role::Worker,
        task: "storage/pages",
        prompt: "Implement fixed-size pages.",
        answer: "done: pages.rs",
        usage: Usage {
            input: 12_000,
            cached_input: 30_000,
            output: 5_000,
        },
    },
    RecordedCall {
        role: Role::Worker,
        task: "storage/log",
        prompt: "Implement the write-ahead log.",
        answer: "done: wal.rs",
        usage: Usage {
            input: 15_000,
            cached_input: 20_000,
            output: 7_000,
        },
    },
    RecordedCall {
        role: Role::Worker,
        task: "network/framing",
        prompt: "Implement framing.",
        answer: "done: frame.rs",
        usage: Usage {
            input: 8_000,
            cached_input: 0,
            output: 3_000,
        },
    },
    RecordedCall {
        role: Role::Reviewer,
        task: "storage/log",
        prompt: "Review the write-ahead log.",
        answer: "approved",
        usage: Usage {
            input: 6_000,
            cached_input: 0,
            output: 400,
        },
    },
];

pub fn config() -> LlmConfig {
    LlmConfig::load(&crate::root().join("fixtures/llm/recorded-run/specc.toml")).expect("valid")
}

pub fn request(role: Role, prompt: &str) -> Request {
    let model = config()
        .role(role)
        .map(|r| r.model.clone())
        .unwrap_or_default();
    let max = config().role(role).map_or(0, |r| r.max_tokens);
    Request::new(
        model,
        vec![
            Message::system("You are specc's agent."),
            Message::user(prompt),
        ],
        max,
    )
}
