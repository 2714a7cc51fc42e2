//! The languages specc parses with tree-sitter, by file extension.
//! design: design-docs.tree-sitter

use tree_sitter::Language;

/// The languages specc parses with a grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Syntax {
    Rust,
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    C,
    Cpp,
}

impl Syntax {
    /// The grammar for a file extension (without the dot), if specc has one.
    pub fn for_extension(extension: &str) -> Option<Syntax> {
        Some(match extension {
            "rs" => Syntax::Rust,
            "py" | "pyi" => Syntax::Python,
            "js" | "mjs" | "cjs" | "jsx" => Syntax::JavaScript,
            "ts" | "mts" | "cts" => Syntax::TypeScript,
            "tsx" => Syntax::Tsx,
            "go" => Syntax::Go,
            "c" | "h" => Syntax::C,
            "cc" | "cpp" | "cxx" | "c++" | "hh" | "hpp" | "hxx" | "h++" | "ipp" => Syntax::Cpp,
            _ => return None,
        })
    }

    pub(crate) fn language(self) -> Language {
        match self {
            Syntax::Rust => tree_sitter_rust::LANGUAGE.into(),
            Syntax::Python => tree_sitter_python::LANGUAGE.into(),
            Syntax::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Syntax::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Syntax::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Syntax::Go => tree_sitter_go::LANGUAGE.into(),
            Syntax::C => tree_sitter_c::LANGUAGE.into(),
            Syntax::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        }
    }
}
