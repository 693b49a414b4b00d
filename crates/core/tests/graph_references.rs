//! `REFERENCES` edges (type uses) in the languages the fixture projects do not cover, on small
//! two-file projects: parameter, return, field, property and variable types, `new X` / constructor
//! calls and generic arguments point at the project's types; built-in types make no edge; a name
//! no file defines stays external with the type as written.
#![allow(clippy::unwrap_used)]
use std::collections::{BTreeSet, HashMap};

use edgerag_core::graph::{extract_graph, resolve, EdgeKind, FileGraph};
use edgerag_core::Language;

type Pairs = BTreeSet<(String, String)>;

/// The resolved `REFERENCES` pairs (src fqn, dst fqn) and the external ones (src fqn, name).
fn references(files: &[(&str, &str, Language)]) -> (Pairs, Pairs) {
    let mut graphs: Vec<FileGraph> =
        files.iter().map(|(path, text, lang)| extract_graph(path, text, *lang).unwrap()).collect();
    resolve(&mut graphs);
    let fqn: HashMap<&str, &str> =
        graphs.iter().flat_map(|g| &g.nodes).map(|n| (n.id.as_str(), n.fqn.as_str())).collect();
    let mut resolved = BTreeSet::new();
    let mut external = BTreeSet::new();
    for e in graphs.iter().flat_map(|g| &g.edges).filter(|e| e.kind == EdgeKind::References) {
        let src = fqn[e.src.as_str()].to_string();
        match &e.dst {
            Some(d) => resolved.insert((src, fqn[d.as_str()].to_string())),
            None => external.insert((src, e.dst_name.clone())),
        };
    }
    (resolved, external)
}

fn pairs(list: &[(&str, &str)]) -> Pairs {
    list.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

#[test]
fn csharp_parameter_return_field_and_generic_types_reference_the_project_types() {
    let model = "namespace Shop.Model;\n\npublic class Item {\n    public string Name { get; set; }\n}\n";
    let service = "namespace Shop.Service;\n\nusing Shop.Model;\n\npublic class ItemService {\n    private \
                   List<Item> items = new List<Item>();\n\n    public Item Add(string name) {\n        var \
                   item = new Item();\n        items.Add(item);\n        return item;\n    }\n\n    public \
                   void Log(Logger logger) {\n    }\n}\n";
    let (resolved, external) = references(&[
        ("Model/Item.cs", model, Language::Csharp),
        ("Service/ItemService.cs", service, Language::Csharp),
    ]);
    assert_eq!(
        resolved,
        pairs(&[
            ("Shop.Service.ItemService.items", "Shop.Model.Item"),
            ("Shop.Service.ItemService.Add", "Shop.Model.Item")
        ])
    );
    assert!(external.contains(&("Shop.Service.ItemService.Log".into(), "Logger".into())), "{external:?}");
    assert!(
        !external.iter().any(|(_, n)| n == "string"),
        "predefined types are not references: {external:?}"
    );
}

#[test]
fn kotlin_parameter_property_and_generic_types_reference_the_project_types() {
    let model = "package shop.model\n\nclass Item(val name: String)\n";
    let service = "package shop.service\n\nimport shop.model.Item\n\nclass ItemService {\n    private val \
                   items: MutableList<Item> = mutableListOf()\n\n    fun add(name: String): Item {\n        \
                   val item = Item(name)\n        items.add(item)\n        return item\n    }\n}\n";
    let (resolved, external) = references(&[
        ("model/Item.kt", model, Language::Kotlin),
        ("service/ItemService.kt", service, Language::Kotlin),
    ]);
    assert!(
        resolved.contains(&("shop.service.ItemService.add".into(), "shop.model.Item".into())),
        "{resolved:?}"
    );
    assert!(resolved.iter().all(|(_, d)| d == "shop.model.Item"), "{resolved:?}");
    assert!(!external.iter().any(|(_, n)| n == "String"), "built-in types are not references: {external:?}");
}

#[test]
fn python_hints_reference_classes_through_imports_and_builtins_make_no_edge() {
    let models = "class User:\n    pass\n";
    let repo = "from typing import Optional\n\nfrom .models import User\n\n\ndef load(key: str) -> Optional[User]:\n    \
                return None\n\n\ndef store(users: list[User], limit: int = 3) -> None:\n    pass\n";
    let (resolved, external) =
        references(&[("app/models.py", models, Language::Python), ("app/repo.py", repo, Language::Python)]);
    assert_eq!(
        resolved,
        pairs(&[("app.repo.load", "app.models.User"), ("app.repo.store", "app.models.User")])
    );
    assert_eq!(external, pairs(&[("app.repo.load", "Optional")]));
}
