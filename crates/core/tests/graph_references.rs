//! `REFERENCES` edges (type uses) in the languages the fixture projects do not cover, on small
//! two-file projects: parameter, return, field, property and variable types, `new X` / constructor
//! calls, generic arguments, `instanceof`, static calls on a class and (Ruby) classes used as call
//! receivers or rescued point at the project's types; built-in types make no edge; a name no file
//! defines stays external with the type as written.
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
        graphs.iter().flat_map(|g| &g.nodes).map(|n| (&*n.id, n.fqn.as_str())).collect();
    let mut resolved = BTreeSet::new();
    let mut external = BTreeSet::new();
    for e in graphs.iter().flat_map(|g| &g.edges).filter(|e| e.kind == EdgeKind::References) {
        let src = fqn[&*e.src].to_string();
        match &e.dst {
            Some(d) => resolved.insert((src, fqn[&**d].to_string())),
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

#[test]
fn php_type_declarations_new_instanceof_and_static_calls_reference_the_project_classes() {
    let model =
        "<?php\nnamespace Shop\\Model;\n\nclass Item {\n    public string $name;\n\n    public static \
                 function make(): static {\n        return new static();\n    }\n}\n";
    let service = "<?php\nnamespace Shop\\Service;\n\nuse Shop\\Model\\Item;\n\nclass ItemService {\n    \
                   private ?Item $last = null;\n    protected ?Item $first, $second;\n\n    public function add(string $name): Item {\n        $item = \
                   new Item();\n        $this->last = $item;\n        return $item;\n    }\n\n    public function \
                   isItem($value): bool {\n        return $value instanceof Item;\n    }\n\n    public function \
                   copy(): void {\n        $eol = PHP_EOL;\n        $item = Item::make();\n        \
                   self::check($item . $eol);\n    }\n\n    public function log(Logger $logger, int $level): \
                   void {\n    }\n\n    private static function check(string $s): void {\n    }\n}\n";
    let (resolved, external) = references(&[
        ("src/Model/Item.php", model, Language::Php),
        ("src/Service/ItemService.php", service, Language::Php),
    ]);
    assert_eq!(
        resolved,
        pairs(&[
            // The property's type belongs to the property, not to its class.
            ("Shop.Service.ItemService.last", "Shop.Model.Item"),
            // One type for two properties: it stays with the class.
            ("Shop.Service.ItemService", "Shop.Model.Item"),
            ("Shop.Service.ItemService.add", "Shop.Model.Item"),
            ("Shop.Service.ItemService.isItem", "Shop.Model.Item"),
            ("Shop.Service.ItemService.copy", "Shop.Model.Item"),
        ])
    );
    assert_eq!(external, pairs(&[("Shop.Service.ItemService.log", "Logger")]));
}

#[test]
fn ruby_classes_used_as_receivers_or_rescued_reference_the_project_classes() {
    let item = "module Shop\n  class Item\n    def self.build(name)\n      new\n    end\n  end\nend\n";
    let service = "require_relative \"item\"\n\nmodule Shop\n  class Service\n    LIMIT = 10\n\n    def \
                   add(name)\n      item = Item.new\n      item\n    end\n\n    def load(id)\n      \
                   Shop::Item.build(id)\n    rescue NotFoundError\n      nil\n    end\n\n    def log(line)\n      \
                   Logger.new(line)\n      LIMIT.times { line }\n    end\n  end\nend\n";
    let (resolved, external) = references(&[
        ("lib/shop/item.rb", item, Language::Ruby),
        ("lib/shop/service.rb", service, Language::Ruby),
    ]);
    assert_eq!(resolved, pairs(&[("Shop.Service.add", "Shop.Item"), ("Shop.Service.load", "Shop.Item")]));
    assert_eq!(
        external,
        pairs(&[("Shop.Service.load", "NotFoundError"), ("Shop.Service.log", "Logger")]),
        "a constant used as a value (`LIMIT.times`) is no reference"
    );
}
