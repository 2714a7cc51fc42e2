//! A finished span as the exporter ships it.
//! design: runtime.traces

/// A span as exported: ids, parent, times and attributes.
#[derive(Clone, Debug)]
pub(crate) struct Finished {
    pub(crate) trace: [u8; 16],
    pub(crate) id: [u8; 8],
    pub(crate) parent: Option<[u8; 8]>,
    pub(crate) name: &'static str,
    pub(crate) start_ns: u128,
    pub(crate) end_ns: u128,
    pub(crate) attributes: Vec<(String, Value)>,
}

/// An attribute's value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
}
