use specc_passes::references::{Method, extract};
use std::collections::BTreeMap;
fn main() {
    let mut files = vec![];
    for e in std::fs::read_dir("/tmp/tree10k/src").unwrap() { for f in std::fs::read_dir(e.unwrap().path()).unwrap() { let p = f.unwrap().path(); files.push(p); } }
    let texts: Vec<(String,String)> = files.iter().map(|p| (p.extension().unwrap().to_str().unwrap().to_owned(), std::fs::read_to_string(p).unwrap())).collect();
    let mut by: BTreeMap<String, (std::time::Duration, usize)> = BTreeMap::new();
    for (ext, text) in &texts { let m = Method::for_extension(ext).unwrap(); let t = std::time::Instant::now(); extract(specc_ir::FileId(0), m, text); let e = by.entry(ext.clone()).or_default(); e.0 += t.elapsed(); if text.contains("design:") { e.1 += 1; } }
    for (k, (d, n)) in by { eprintln!("{k}: {d:?} over {n} parsed, {:?}/file", d / n.max(1) as u32); }
}
