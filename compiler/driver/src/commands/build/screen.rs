//! The live display of a build on a terminal (indicatif): a first line with the tasks done
//! of all, running and failed, and the dollars spent against the budget; under it one line
//! per running attempt with its task, attempt, role, model calls so far and what it is doing.
//! Every line fits the terminal's width (the bar and the attempts' text are cut to it), so a
//! redraw never wraps; the events' lines scroll above it.
//! design: driver.progress

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use specc_runtime::Event;

/// How often the spinners and the elapsed time redraw.
const TICK: Duration = Duration::from_millis(150);

/// The tasks' counts the first line shows.
#[derive(Default)]
pub(super) struct Counts {
    pub(super) done: usize,
    pub(super) running: usize,
    pub(super) failed: usize,
}

/// One running attempt's line.
struct Running {
    bar: ProgressBar,
    attempt: u32,
    role: String,
}

pub(super) struct Screen {
    multi: MultiProgress,
    main: ProgressBar,
    running: RefCell<BTreeMap<String, Running>>,
    /// `· $x of $cap` once known.
    spent: RefCell<String>,
}

impl Screen {
    pub(super) fn new(total: usize) -> Screen {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let main = multi.add(ProgressBar::new(total as u64));
        main.set_style(
            ProgressStyle::with_template("{elapsed_precise} {wide_bar} {pos}/{len} done{msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        main.enable_steady_tick(TICK);
        Screen {
            multi,
            main,
            running: RefCell::new(BTreeMap::new()),
            spent: RefCell::new(String::new()),
        }
    }

    /// Takes in one event, with the counts after it.
    pub(super) fn event(&self, e: &Event, counts: &Counts) {
        match e {
            Event::AttemptStarted {
                task,
                attempt,
                role,
            } => self.started(task, *attempt, role),
            Event::Step {
                task,
                attempt,
                call,
                doing,
            } => self.doing(task, *attempt, &format!("call {call}: {doing}")),
            Event::Merging { task, path } => {
                self.doing_any(task, &format!("merge agent on {path}"));
            }
            Event::Landed { task, .. }
            | Event::Failed { task, .. }
            | Event::TaskStopped { task, .. }
            | Event::Parked { task, .. }
            | Event::Conflict { task, .. } => self.ended(task),
            _ => {}
        }
        self.main.set_position(counts.done as u64);
        self.show_counts(counts);
    }

    /// The dollars spent, and the cap if there is one.
    pub(super) fn spent(&self, dollars: f64, cap: Option<f64>, counts: &Counts) {
        *self.spent.borrow_mut() = match cap {
            Some(c) => format!(" · ${dollars:.2} of ${c:.2}"),
            None => format!(" · ${dollars:.2}"),
        };
        self.show_counts(counts);
    }

    /// A line above the display.
    pub(super) fn println(&self, line: &str) {
        let _ = self.multi.println(line);
    }

    pub(super) fn finish(&self) {
        for (_, r) in std::mem::take(&mut *self.running.borrow_mut()) {
            r.bar.finish_and_clear();
            self.multi.remove(&r.bar);
        }
        self.main.finish_and_clear();
        let _ = self.multi.clear();
    }

    fn show_counts(&self, c: &Counts) {
        let failed = if c.failed > 0 {
            format!(" · {} failed", c.failed)
        } else {
            String::new()
        };
        self.main.set_message(format!(
            " · {} running{failed}{}",
            c.running,
            self.spent.borrow()
        ));
    }

    fn started(&self, task: &str, attempt: u32, role: &str) {
        let mut running = self.running.borrow_mut();
        let r = running.entry(task.to_owned()).or_insert_with(|| {
            let bar = self.multi.add(ProgressBar::new_spinner());
            bar.set_style(
                ProgressStyle::with_template("  {spinner} {wide_msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(TICK);
            Running {
                bar,
                attempt,
                role: role.to_owned(),
            }
        });
        r.attempt = attempt;
        r.role = role.to_owned();
        r.bar
            .set_message(format!("{task} · attempt {attempt} ({role}) · starting"));
    }

    fn doing(&self, task: &str, attempt: u32, what: &str) {
        if let Some(r) = self.running.borrow_mut().get_mut(task) {
            r.attempt = attempt;
            r.bar
                .set_message(format!("{task} · attempt {attempt} ({}) · {what}", r.role));
        }
    }

    fn doing_any(&self, task: &str, what: &str) {
        let attempt = self.running.borrow().get(task).map(|r| r.attempt);
        if let Some(attempt) = attempt {
            self.doing(task, attempt, what);
        }
    }

    fn ended(&self, task: &str) {
        if let Some(r) = self.running.borrow_mut().remove(task) {
            r.bar.finish_and_clear();
            self.multi.remove(&r.bar);
        }
    }
}
