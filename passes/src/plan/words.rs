//! How the plan's checks name things in their messages: a task, and a text cut short.
//! design: passes.plan-checks

/// A model's (or the spec's) text cut to `max` characters for a message.
pub(crate) fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(max).collect::<String>())
    }
}

/// How a task is named in messages: the root task's id is empty.
pub fn task_name(task: &str) -> String {
    if task.is_empty() {
        "the root".to_owned()
    } else {
        format!("`{task}`")
    }
}
