//! Replaying a recorded conversation whose tool results differ from the recording's (the
//! timings and paths a command prints): found by the loose fingerprint, unless two
//! recorded answers share it; anything else that differs is a miss.

use std::io::Write as _;

use specc_llm::types::Author;
use specc_llm::{Message, Provider, Recording, Replay, Request, Scripted, Usage, fingerprint};

fn conversation(user: &str, tool_result: &str) -> Request {
    let mut said = Message::new(Author::Assistant, String::new());
    said.tool_calls = Vec::new();
    let mut result = Message::new(Author::Tool, tool_result.to_owned());
    result.tool_call_id = Some("call-1".into());
    Request::new(
        "system".to_owned(),
        vec![Message::user(user), said, result],
        100,
    )
}

fn write(lines: &[(Request, &str)]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().expect("tmp");
    for (request, answer) in lines {
        let line = Recording {
            fingerprint: fingerprint(request),
            request: request.clone(),
            response: Scripted::text(answer, Usage::default()),
        };
        writeln!(f, "{}", serde_json::to_string(&line).expect("json")).expect("write");
    }
    f
}

#[tokio::test]
async fn a_conversation_whose_tool_results_differ_replays_and_one_that_says_otherwise_misses() {
    let f = write(&[(
        conversation("build it", "test result: ok. finished in 0.52s"),
        "next",
    )]);
    let replay = Replay::open("r", f.path()).expect("open");
    let timing = conversation("build it", "test result: ok. finished in 0.07s");
    let r = replay
        .complete(&timing)
        .await
        .expect("found by the loose fingerprint");
    assert_eq!(r.text, "next");
    let other = conversation("build something else", "test result: ok. finished in 0.52s");
    assert!(
        replay.complete(&other).await.is_err(),
        "a changed prompt is a miss"
    );
}

#[tokio::test]
async fn two_recorded_answers_with_one_loose_fingerprint_serve_only_exact_matches() {
    let (a, b) = (
        conversation("build it", "3 tests failed"),
        conversation("build it", "all tests passed"),
    );
    let f = write(&[(a.clone(), "fix them"), (b.clone(), "done")]);
    let replay = Replay::open("r", f.path()).expect("open");
    assert_eq!(replay.complete(&a).await.expect("exact").text, "fix them");
    assert_eq!(replay.complete(&b).await.expect("exact").text, "done");
    let c = conversation("build it", "2 tests failed");
    assert!(
        replay.complete(&c).await.is_err(),
        "ambiguous: neither answer is served"
    );
}
