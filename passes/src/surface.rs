//! The public surface of a source file, from its tree-sitter syntax tree: the items another
//! module or a user of the package can reach — `pub` items of a Rust file, top-level
//! functions and classes of a Python file whose names do not start with `_`, exported
//! declarations of JavaScript and TypeScript, and capitalised top-level declarations of Go.
//! What `specc adopt` turns into requirements to keep. Pure: text in, items out.
//! design: driver.adopt

use tree_sitter::{Node, Parser};

use crate::references::Syntax;

/// One item of the public surface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// `fn`, `struct`, `class`, `def`, …: the declaration's keyword as the language writes it.
    pub kind: String,
    pub name: String,
    /// The declaration's first line, white space collapsed, cut at its body.
    pub signature: String,
    /// 1-based.
    pub line: u32,
}

/// The public items of `text` in the language `syntax`, in file order. A file that does not
/// parse yields what its tree holds (tree-sitter recovers), never an error.
pub fn public_items(syntax: Syntax, text: &str) -> Vec<Item> {
    let mut parser = Parser::new();
    if parser.set_language(&syntax.language()).is_err() {
        return Vec::new();
    }
    let Some(tree) = parser.parse(text, None) else {
        return Vec::new();
    };
    let root = tree.root_node();
    let mut out = Vec::new();
    let mut cursor = root.walk();
    for node in root.named_children(&mut cursor) {
        match syntax {
            Syntax::Rust => rust(node, text, &mut out),
            Syntax::Python => python(node, text, &mut out),
            Syntax::JavaScript | Syntax::TypeScript | Syntax::Tsx => js(node, text, &mut out),
            Syntax::Go => go(node, text, &mut out),
            Syntax::C | Syntax::Cpp => {}
        }
    }
    out
}

fn item(node: Node<'_>, text: &str, kind: &str, name: &str) -> Item {
    item_with_body(node, node, text, kind, name)
}

/// The item `node`, whose signature ends where `decl`'s body starts.
fn item_with_body(node: Node<'_>, decl: Node<'_>, text: &str, kind: &str, name: &str) -> Item {
    if kind == "macro" {
        return Item {
            kind: kind.to_owned(),
            name: name.to_owned(),
            signature: format!("macro_rules! {name}"),
            line: node.start_position().row as u32 + 1,
        };
    }
    let body = decl
        .child_by_field_name("body")
        .map_or(node.end_byte(), |b| b.start_byte());
    let start = node.start_byte();
    let head = text.get(start..body.max(start)).unwrap_or_default();
    // The whole head on one line, each line's trailing comment dropped (`# type: ignore`).
    let joined: Vec<&str> = head
        .lines()
        .map(|l| {
            let cut = [" # ", " // "].iter().filter_map(|m| l.find(m)).min();
            cut.map_or(l, |at| &l[..at])
        })
        .collect();
    let mut signature = joined
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    signature = signature
        .replace("( ", "(")
        .replace(" )", ")")
        .replace(", )", ")");
    signature = signature.trim_end_matches(['{', ':', ' ']).to_owned();
    if signature.chars().count() > 120 {
        signature = format!("{}…", signature.chars().take(119).collect::<String>());
    }
    Item {
        kind: kind.to_owned(),
        name: name.to_owned(),
        signature,
        line: node.start_position().row as u32 + 1,
    }
}

fn name_of<'t>(node: Node<'_>, text: &'t str) -> Option<&'t str> {
    let name = node.child_by_field_name("name")?;
    text.get(name.byte_range())
}

fn rust(node: Node<'_>, text: &str, out: &mut Vec<Item>) {
    if node.kind() == "impl_item" {
        return rust_impl(node, text, out);
    }
    let kind = match node.kind() {
        "function_item" => "fn",
        "struct_item" => "struct",
        "enum_item" => "enum",
        "trait_item" => "trait",
        "type_item" => "type",
        "const_item" => "const",
        "static_item" => "static",
        "macro_definition" => "macro",
        _ => return,
    };
    let public = {
        let mut c = node.walk();
        node.children(&mut c).any(|ch| {
            ch.kind() == "visibility_modifier" && text.get(ch.byte_range()) == Some("pub")
        })
    };
    // `#[macro_export]` makes a macro public; other macros are not.
    let exported_macro = kind == "macro"
        && node
            .prev_named_sibling()
            .and_then(|p| text.get(p.byte_range()))
            .is_some_and(|a| a.contains("macro_export"));
    if !(public || exported_macro) {
        return;
    }
    if let Some(name) = name_of(node, text) {
        out.push(item(node, text, kind, name));
    }
}

/// The `pub fn`s of an inherent `impl Type` (not a trait's: those are the trait's surface),
/// named `Type::name`.
fn rust_impl(node: Node<'_>, text: &str, out: &mut Vec<Item>) {
    if node.child_by_field_name("trait").is_some() {
        return;
    }
    let (Some(ty), Some(body)) = (
        node.child_by_field_name("type")
            .and_then(|t| text.get(t.byte_range())),
        node.child_by_field_name("body"),
    ) else {
        return;
    };
    let mut c = body.walk();
    for f in body
        .named_children(&mut c)
        .filter(|f| f.kind() == "function_item")
    {
        let mut fc = f.walk();
        let public = f.children(&mut fc).any(|ch| {
            ch.kind() == "visibility_modifier" && text.get(ch.byte_range()) == Some("pub")
        });
        if let (true, Some(name)) = (public, name_of(f, text)) {
            let mut method = item(f, text, "fn", &format!("{ty}::{name}"));
            method.signature = format!("impl {ty} {{ {} }}", method.signature);
            out.push(method);
        }
    }
}

fn python(node: Node<'_>, text: &str, out: &mut Vec<Item>) {
    let node = match node.kind() {
        "decorated_definition" => match node.child_by_field_name("definition") {
            Some(d) => d,
            None => return,
        },
        _ => node,
    };
    let kind = match node.kind() {
        "function_definition" => "def",
        "class_definition" => "class",
        _ => return,
    };
    let Some(name) = name_of(node, text).filter(|n| !n.starts_with('_')) else {
        return;
    };
    out.push(item(node, text, kind, name));
    // A public class's public methods, as `Class.method`.
    let Some(body) = node.child_by_field_name("body").filter(|_| kind == "class") else {
        return;
    };
    let mut c = body.walk();
    for member in body.named_children(&mut c) {
        let member = match member.kind() {
            "decorated_definition" => match member.child_by_field_name("definition") {
                Some(d) => d,
                None => continue,
            },
            _ => member,
        };
        if member.kind() != "function_definition" {
            continue;
        }
        if let Some(m) = name_of(member, text).filter(|n| !n.starts_with('_')) {
            let mut method = item(member, text, "def", &format!("{name}.{m}"));
            method.signature = format!("class {name}: {}", method.signature);
            out.push(method);
        }
    }
}

fn js(node: Node<'_>, text: &str, out: &mut Vec<Item>) {
    if node.kind() != "export_statement" {
        return;
    }
    let Some(decl) = node.child_by_field_name("declaration") else {
        return;
    };
    let kind = match decl.kind() {
        "function_declaration" | "generator_function_declaration" => "function",
        "class_declaration" => "class",
        "interface_declaration" => "interface",
        "type_alias_declaration" => "type",
        "enum_declaration" => "enum",
        "lexical_declaration" | "variable_declaration" => "const",
        _ => return,
    };
    let name = name_of(decl, text).or_else(|| {
        let mut c = decl.walk();
        let declarator = decl
            .named_children(&mut c)
            .find(|n| n.kind() == "variable_declarator")?;
        name_of(declarator, text)
    });
    if let Some(name) = name {
        out.push(item_with_body(node, decl, text, kind, name));
    }
}

fn go(node: Node<'_>, text: &str, out: &mut Vec<Item>) {
    let (kind, named) = match node.kind() {
        "function_declaration" | "method_declaration" => ("func", node),
        "type_declaration" => {
            let mut c = node.walk();
            match node
                .named_children(&mut c)
                .find(|n| n.kind() == "type_spec")
            {
                Some(spec) => ("type", spec),
                None => return,
            }
        }
        _ => return,
    };
    if let Some(name) = name_of(named, text).filter(|n| n.starts_with(char::is_uppercase)) {
        out.push(item(node, text, kind, name));
    }
}

#[cfg(test)]
mod tests {
    use super::{Syntax, public_items};

    fn names(syntax: Syntax, text: &str) -> Vec<String> {
        public_items(syntax, text)
            .into_iter()
            .map(|i| format!("{} {}: {}", i.kind, i.name, i.signature))
            .collect()
    }

    #[test]
    fn rust_pub_items_only() {
        let got = names(
            Syntax::Rust,
            "pub fn add(a: u64, b: u64) -> u64 {\n    a + b\n}\nfn hidden() {}\npub(crate) fn inner() {}\npub struct Counter {\n    n: u64,\n}\nimpl Counter {\n    pub fn new() -> Counter { Counter { n: 0 } }\n    fn private(&self) {}\n}\n#[macro_export]\nmacro_rules! m { () => {} }\n",
        );
        assert_eq!(
            got,
            vec![
                "fn add: pub fn add(a: u64, b: u64) -> u64",
                "struct Counter: pub struct Counter",
                "fn Counter::new: impl Counter { pub fn new() -> Counter }",
                "macro m: macro_rules! m",
            ]
        );
    }

    #[test]
    fn python_top_level_public_names() {
        let got = names(
            Syntax::Python,
            "def encode(data: bytes) -> str:\n    pass\n\ndef _private():\n    pass\n\n@dataclass\nclass Codec:\n    x: int\n    def run(self) -> None:\n        pass\n    def _hidden(self):\n        pass\n",
        );
        assert_eq!(
            got,
            vec![
                "def encode: def encode(data: bytes) -> str",
                "class Codec: class Codec",
                "def Codec.run: class Codec: def run(self) -> None",
            ]
        );
    }

    #[test]
    fn typescript_exports_and_go_capitals() {
        let got = names(
            Syntax::TypeScript,
            "export function parse(s: string): Ast { return x }\nfunction hidden() {}\nexport const VERSION = '1';\n",
        );
        assert_eq!(
            got,
            vec![
                "function parse: export function parse(s: string): Ast",
                "const VERSION: export const VERSION = '1';",
            ]
        );
        let got = names(
            Syntax::Go,
            "package p\nfunc Parse(s string) int { return 0 }\nfunc hidden() {}\ntype Tree struct{}\n",
        );
        assert_eq!(
            got,
            vec![
                "func Parse: func Parse(s string) int",
                "type Tree: type Tree struct{}"
            ]
        );
    }
}
