//! The stuck detector: an attempt that repeats itself is ended by the orchestrator, not
//! talked out of it by the prompt. Three patterns, over the attempt's tool actions (a tool
//! name with its arguments) and their results:
//! * the same action with the same result 4 times in a row;
//! * the same action failing 3 times in a row;
//! * two actions alternating, A-B-A-B (each with the same result each time).
//!
//! design: runtime.limits-enforced

/// One action and what it gave.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Seen {
    action: String,
    result: String,
    failed: bool,
}

#[derive(Debug, Default)]
pub(super) struct StuckDetector {
    history: Vec<Seen>,
}

impl StuckDetector {
    /// Records an action (a canonical text of the tool and its arguments) and its result.
    /// Returns why the attempt is stuck, if it now is.
    pub(super) fn record(&mut self, action: &str, result: &str, failed: bool) -> Option<String> {
        self.history.push(Seen {
            action: action.to_owned(),
            result: result.to_owned(),
            failed,
        });
        let h = &self.history;
        let n = h.len();
        let short = |s: &str| s.chars().take(80).collect::<String>();
        if n >= 4 && h[n - 4..].iter().all(|s| *s == h[n - 1]) {
            return Some(format!(
                "the same action with the same result 4 times: {}",
                short(action)
            ));
        }
        if n >= 3
            && h[n - 3..]
                .iter()
                .all(|s| s.failed && s.action == h[n - 1].action)
        {
            return Some(format!("the same action failed 3 times: {}", short(action)));
        }
        if n >= 4 && h[n - 4] == h[n - 2] && h[n - 3] == h[n - 1] && h[n - 1] != h[n - 2] {
            return Some(format!(
                "two actions alternating (A-B-A-B): {} / {}",
                short(&h[n - 2].action),
                short(action)
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::StuckDetector;

    #[test]
    fn four_repeats_end_an_attempt() {
        let mut d = StuckDetector::default();
        for _ in 0..3 {
            assert_eq!(d.record("read a", "x", false), None);
        }
        assert!(d.record("read a", "x", false).is_some());
    }

    #[test]
    fn a_changing_result_is_progress() {
        let mut d = StuckDetector::default();
        for i in 0..6 {
            assert_eq!(d.record("run test", &i.to_string(), false), None);
        }
    }

    #[test]
    fn three_failures_of_one_action() {
        let mut d = StuckDetector::default();
        assert_eq!(d.record("edit x", "0 matches", true), None);
        assert_eq!(d.record("edit x", "0 matches (again)", true), None);
        assert!(d.record("edit x", "0 matches", true).is_some());
    }

    #[test]
    fn alternation() {
        let mut d = StuckDetector::default();
        assert_eq!(d.record("a", "1", false), None);
        assert_eq!(d.record("b", "2", false), None);
        assert_eq!(d.record("a", "1", false), None);
        assert!(d.record("b", "2", false).is_some());
    }
}
