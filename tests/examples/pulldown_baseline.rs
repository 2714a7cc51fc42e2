//! The front end's baseline as a process (issue 40): pulldown-cmark's event iteration with
//! offsets, with the options specc's front end uses, over one file, printing the event
//! count. `scripts/bench-front-end-process.sh` times it against `specc plan FILE --emit
//! intent` with hyperfine.

// The binary's allocator, as specc's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[allow(clippy::print_stdout, clippy::print_stderr)] // a bench binary reports on stdout
fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: pulldown-baseline FILE");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    let options =
        pulldown_cmark::Options::ENABLE_TABLES | pulldown_cmark::Options::ENABLE_HEADING_ATTRIBUTES;
    let n = pulldown_cmark::Parser::new_ext(&text, options)
        .into_offset_iter()
        .count();
    println!("{n} events");
}
