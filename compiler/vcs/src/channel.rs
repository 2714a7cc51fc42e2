//! The integrator's channel: what a `Repo` handle asks the integrator thread, each request
//! with where its answer goes. `lib.rs` is the facade that sends them.

use tokio::sync::oneshot;

use crate::object::{self, ObjectId};
use crate::{Bundle, FileList, HeadFile, Outcome, Stats, Submission, export, read};

pub(crate) enum Request {
    Submit(Box<Submission>, oneshot::Sender<Outcome>),
    ReadHead(String, oneshot::Sender<(ObjectId, Option<HeadFile>)>),
    File(ObjectId, String, oneshot::Sender<Option<read::FileAt>>),
    Changes(ObjectId, ObjectId, oneshot::Sender<Option<read::Changes>>),
    Flag(String),
    Stats(oneshot::Sender<Stats>),
    Commit(ObjectId, oneshot::Sender<Option<object::Commit>>),
    Files(ObjectId, oneshot::Sender<Option<FileList>>),
    Export(
        Option<ObjectId>,
        export::Onto,
        oneshot::Sender<Option<(Vec<u8>, usize, ObjectId)>>,
    ),
    Bundle(Option<ObjectId>, oneshot::Sender<Option<Bundle>>),
    Import(Box<Bundle>, oneshot::Sender<bool>),
}
