use super::*;
use crate::graph::extract_graph;
use crate::lang::Language;

/// A resolved project's CALLS edges as (caller fqn, callee as written, target fqn).
fn calls(files: &[(&str, &str)]) -> Vec<(String, String, Option<String>)> {
    let mut graphs: Vec<FileGraph> = files
        .iter()
        .map(|(path, text)| extract_graph(path, text, Language::detect(path)).expect(path))
        .collect();
    resolve(&mut graphs);
    let fqn: HashMap<&str, &str> =
        graphs.iter().flat_map(|g| &g.nodes).map(|n| (&*n.id, n.fqn.as_str())).collect();
    let edges = graphs.iter().flat_map(|g| &g.edges).filter(|e| e.kind == EdgeKind::Calls);
    edges
        .map(|e| {
            let dst = e.dst.as_deref().map(|d| fqn[d].to_string());
            (fqn[&*e.src].to_string(), e.dst_name.clone(), dst)
        })
        .collect()
}

/// The target of the call written `written` in `caller` (`None`: external).
fn target<'a>(edges: &'a [(String, String, Option<String>)], caller: &str, written: &str) -> Option<&'a str> {
    let edge = edges.iter().find(|(src, name, _)| src == caller && name == written);
    let (_, _, dst) = edge.unwrap_or_else(|| panic!("no call {written} in {caller}: {edges:#?}"));
    dst.as_deref()
}

#[test]
fn rust_paths_to_outside_types_stay_external() {
    let store = r#"pub struct Store {
    items: Vec<u32>,
}

impl Store {
    pub fn new() -> Self {
        let mut items = Vec::new();
        let _name = String::from("store");
        let _old = std::mem::take(&mut items);
        let _map = std::collections::HashMap::<u32, u32>::with_capacity(4);
        Self::helper();
        Store::other();
        Self { items }
    }

    fn helper() {}

    pub fn other() {}

    pub fn with_capacity(n: usize) -> Self {
        Self::new()
    }
}

pub struct Queue;

impl Queue {
    pub fn take(&mut self) {}
}

pub struct Error;

impl Error {
    pub fn other(_: &str) -> Self {
        Error
    }
}
"#;
    let app = r#"use crate::store::Store;

pub fn build() -> Store {
    let _v: Vec<u8> = Vec::new();
    let mut q = 0;
    let _t = std::mem::take(&mut q);
    let _e = std::io::Error::other("x");
    Store::other();
    app_store::store::Store::other();
    Store::new()
}
"#;
    let edges = calls(&[("src/store.rs", store), ("src/app.rs", app)]);
    for (caller, written) in [
        ("store.Store.new", "Vec::new"),
        ("store.Store.new", "String::from"),
        ("store.Store.new", "std::mem::take"),
        ("store.Store.new", "std::collections::HashMap::::with_capacity"),
        ("app.build", "Vec::new"),
        ("app.build", "std::mem::take"),
        ("app.build", "std::io::Error::other"),
    ] {
        assert_eq!(target(&edges, caller, written), None, "{caller}: {written}");
    }
    assert_eq!(target(&edges, "store.Store.new", "Self::helper"), Some("store.Store.helper"));
    assert_eq!(target(&edges, "store.Store.new", "Store::other"), Some("store.Store.other"));
    assert_eq!(target(&edges, "store.Store.with_capacity", "Self::new"), Some("store.Store.new"));
    assert_eq!(target(&edges, "app.build", "Store::other"), Some("store.Store.other"));
    assert_eq!(target(&edges, "app.build", "Store::new"), Some("store.Store.new"));
    // Through the crate's name from another crate of the workspace: a project type.
    assert_eq!(target(&edges, "app.build", "app_store::store::Store::other"), Some("store.Store.other"));
}

#[test]
fn go_standard_packages_stay_external() {
    let store = r#"package store

import (
	"errors"
	"fmt"
	"strings"
)

type Store struct{}

func (s *Store) Split(key string) []string {
	fmt.Println(key)
	return strings.Split(key, "/")
}

func (s *Store) Check() error {
	s.Split("a")
	return errors.New("bad")
}
"#;
    let errs = r#"package errors

func New(msg string) error {
	return nil
}
"#;
    let api = r#"package api

import (
	"example.com/app/errors"
	"example.com/app/store"
)

func Handle(s *store.Store) error {
	s.Check()
	return errors.New("x")
}
"#;
    let edges = calls(&[("store/store.go", store), ("errors/errors.go", errs), ("api/api.go", api)]);
    assert_eq!(target(&edges, "store.Store.Split", "fmt.Println"), None);
    assert_eq!(target(&edges, "store.Store.Split", "strings.Split"), None);
    assert_eq!(target(&edges, "store.Store.Check", "errors.New"), None);
    assert_eq!(target(&edges, "store.Store.Check", "s.Split"), Some("store.Store.Split"));
    assert_eq!(target(&edges, "api.Handle", "errors.New"), Some("errors.New"));
    assert_eq!(target(&edges, "api.Handle", "s.Check"), Some("store.Store.Check"));
}

#[test]
fn ecmascript_builtin_globals_stay_external() {
    let codec = r#"export class Codec {
  parse(text: string) {
    console.table(text);
    return JSON.parse(text);
  }

  max(a: number, b: number) {
    return Math.max(a, b);
  }

  all() {
    return Promise.all([]);
  }

  table() {
    return Object.entries(Array.from([]));
  }

  run() {
    this.max(1, 2);
    return Codec.make();
  }

  static make() {
    return new Codec();
  }
}
"#;
    let main =
        "import { Codec } from \"./codec\";\n\nexport function main(codec: Codec) {\n  codec.all();\n  \
                    Codec.make();\n  return Math.max(1, 2);\n}\n";
    let edges = calls(&[("src/codec.ts", codec), ("src/main.js", main)]);
    for (caller, written) in [
        ("src.codec.Codec.parse", "console.table"),
        ("src.codec.Codec.parse", "JSON.parse"),
        ("src.codec.Codec.max", "Math.max"),
        ("src.codec.Codec.all", "Promise.all"),
        ("src.codec.Codec.table", "Object.entries"),
        ("src.main.main", "Math.max"),
    ] {
        assert_eq!(target(&edges, caller, written), None, "{caller}: {written}");
    }
    assert_eq!(target(&edges, "src.codec.Codec.run", "this.max"), Some("src.codec.Codec.max"));
    assert_eq!(target(&edges, "src.codec.Codec.run", "Codec.make"), Some("src.codec.Codec.make"));
    assert_eq!(target(&edges, "src.main.main", "Codec.make"), Some("src.codec.Codec.make"));
    // A receiver of unknown type: the one method of that name, as before.
    assert_eq!(target(&edges, "src.main.main", "codec.all"), Some("src.codec.Codec.all"));
}

#[test]
fn python_builtin_types_and_library_modules_stay_external() {
    let codec = r#"import json
import os.path


class Codec:
    def loads(self, text):
        return json.loads(text)

    def join(self, *parts):
        return os.path.join(*parts)

    def splitext(self, path):
        return os.path.splitext(path)

    def getcwd(self):
        return os.getcwd()

    def encode(self, s):
        return str.encode(s)

    def fromkeys(self, keys):
        return dict.fromkeys(keys)

    def run(self):
        self.encode("x")
        return Codec.make()

    def cdf(self, x):
        return x

    def overlap(self, other):
        X = other
        return X.cdf(1)

    @staticmethod
    def make():
        return Codec()
"#;
    let main = r#"import app.codec
from app.codec import Codec


def main(codec):
    codec.fromkeys([])
    Codec.make()
    app.codec.Codec.make()
    return str.encode("x")
"#;
    let edges = calls(&[("app/codec.py", codec), ("app/main.py", main)]);
    for (caller, written) in [
        ("app.codec.Codec.loads", "json.loads"),
        ("app.codec.Codec.join", "os.path.join"),
        ("app.codec.Codec.splitext", "os.path.splitext"),
        ("app.codec.Codec.getcwd", "os.getcwd"),
        ("app.codec.Codec.encode", "str.encode"),
        ("app.codec.Codec.fromkeys", "dict.fromkeys"),
        ("app.main.main", "str.encode"),
    ] {
        assert_eq!(target(&edges, caller, written), None, "{caller}: {written}");
    }
    assert_eq!(target(&edges, "app.codec.Codec.run", "self.encode"), Some("app.codec.Codec.encode"));
    assert_eq!(target(&edges, "app.codec.Codec.run", "Codec.make"), Some("app.codec.Codec.make"));
    // One capital letter is a local, not a class: the one method of that name, as before.
    assert_eq!(target(&edges, "app.codec.Codec.overlap", "X.cdf"), Some("app.codec.Codec.cdf"));
    assert_eq!(target(&edges, "app.main.main", "Codec.make"), Some("app.codec.Codec.make"));
    assert_eq!(target(&edges, "app.main.main", "app.codec.Codec.make"), Some("app.codec.Codec.make"));
    assert_eq!(target(&edges, "app.main.main", "codec.fromkeys"), Some("app.codec.Codec.fromkeys"));
}

#[test]
fn java_library_classes_stay_external() {
    let util = r#"package com.shop;

import java.util.*;

public class Util {
    public static String valueOf(int x) {
        return String.valueOf(x);
    }

    public static int max(int a, int b) {
        return Math.max(a, b);
    }

    public void sortAll(List<String> xs) {
        Collections.sort(xs);
        System.out.printf("%s", xs);
    }

    public void printf(String f) {}

    void run() {
        this.max(1, 2);
        max(1, 2);
        Util.valueOf(1);
    }
}
"#;
    let app = r#"package com.shop.app;

import com.shop.Util;

public class App {
    private Util util;

    void main() {
        Util.valueOf(2);
        util.printf("x");
        Integer.valueOf(3);
    }
}
"#;
    let edges =
        calls(&[("src/main/java/com/shop/Util.java", util), ("src/main/java/com/shop/app/App.java", app)]);
    for (caller, written) in [
        ("com.shop.Util.valueOf", "String.valueOf"),
        ("com.shop.Util.max", "Math.max"),
        ("com.shop.Util.sortAll", "System.out.printf"),
        ("com.shop.app.App.main", "Integer.valueOf"),
    ] {
        assert_eq!(target(&edges, caller, written), None, "{caller}: {written}");
    }
    assert_eq!(target(&edges, "com.shop.Util.run", "this.max"), Some("com.shop.Util.max"));
    assert_eq!(target(&edges, "com.shop.Util.run", "max"), Some("com.shop.Util.max"));
    assert_eq!(target(&edges, "com.shop.Util.run", "Util.valueOf"), Some("com.shop.Util.valueOf"));
    assert_eq!(target(&edges, "com.shop.app.App.main", "Util.valueOf"), Some("com.shop.Util.valueOf"));
    assert_eq!(target(&edges, "com.shop.app.App.main", "util.printf"), Some("com.shop.Util.printf"));
}

#[test]
fn kotlin_library_classes_stay_external() {
    let util = r#"package shop

class Util {
    fun parseInt(s: String): Int = Integer.parseInt(s)

    fun max(a: Int, b: Int): Int = Math.max(a, b)

    fun run() {
        this.max(1, 2)
        max(1, 2)
        Util.make()
    }

    companion object {
        fun make(): Util = Util()
    }
}
"#;
    let app = r#"package shop.app

import shop.Util

fun main(util: Util) {
    util.parseInt("1")
    Math.max(1, 2)
}
"#;
    let edges = calls(&[("shop/Util.kt", util), ("shop/app/App.kt", app)]);
    assert_eq!(target(&edges, "shop.Util.parseInt", "Integer.parseInt"), None, "{edges:#?}");
    assert_eq!(target(&edges, "shop.Util.max", "Math.max"), None);
    assert_eq!(target(&edges, "shop.app.main", "Math.max"), None);
    assert_eq!(target(&edges, "shop.Util.run", "this.max"), Some("shop.Util.max"));
    assert_eq!(target(&edges, "shop.Util.run", "max"), Some("shop.Util.max"));
    assert_eq!(target(&edges, "shop.app.main", "util.parseInt"), Some("shop.Util.parseInt"));
}

#[test]
fn csharp_library_classes_stay_external() {
    let util = r#"namespace Shop;

public class Util {
    public int Max(int a, int b) {
        return Math.Max(a, b);
    }

    public void WriteLine(string s) {
        Console.WriteLine(s);
    }

    public void Run() {
        this.Max(1, 2);
        Max(1, 2);
        Util.Make();
    }

    public static Util Make() {
        return new Util();
    }
}
"#;
    let app = r#"namespace Shop.App;

using Shop;

public class App {
    private Util Helper { get; set; }

    public void Main(Util util) {
        util.WriteLine("x");
        Helper.WriteLine("y");
        Util.Make();
        Math.Max(1, 2);
    }
}
"#;
    let edges = calls(&[("Shop/Util.cs", util), ("Shop/App/App.cs", app)]);
    assert_eq!(target(&edges, "Shop.Util.Max", "Math.Max"), None, "{edges:#?}");
    assert_eq!(target(&edges, "Shop.Util.WriteLine", "Console.WriteLine"), None);
    assert_eq!(target(&edges, "Shop.App.App.Main", "Math.Max"), None);
    assert_eq!(target(&edges, "Shop.Util.Run", "this.Max"), Some("Shop.Util.Max"));
    assert_eq!(target(&edges, "Shop.Util.Run", "Max"), Some("Shop.Util.Max"));
    assert_eq!(target(&edges, "Shop.Util.Run", "Util.Make"), Some("Shop.Util.Make"));
    assert_eq!(target(&edges, "Shop.App.App.Main", "util.WriteLine"), Some("Shop.Util.WriteLine"));
    assert_eq!(target(&edges, "Shop.App.App.Main", "Helper.WriteLine"), Some("Shop.Util.WriteLine"));
    assert_eq!(target(&edges, "Shop.App.App.Main", "Util.Make"), Some("Shop.Util.Make"));
}

#[test]
fn php_static_calls_on_library_classes_stay_external() {
    let clock = r#"<?php
namespace App;

class Clock {
    public function now() {
        return Carbon::now();
    }

    public function createFromFormat($f) {
        return \DateTime::createFromFormat($f, 'x');
    }

    public function run() {
        $this->now();
        self::make();
        Clock::make();
    }

    public static function make() {
        return new Clock();
    }
}
"#;
    let app = r#"<?php
namespace App\Web;

use App\Clock;

function main($clock) {
    $clock->now();
    Clock::make();
    return Carbon::now();
}
"#;
    let edges = calls(&[("src/Clock.php", clock), ("src/Web/app.php", app)]);
    assert_eq!(target(&edges, "App.Clock.now", "Carbon.now"), None, "{edges:#?}");
    assert_eq!(target(&edges, "App.Clock.createFromFormat", "\\DateTime.createFromFormat"), None);
    assert_eq!(target(&edges, "App.Web.main", "Carbon.now"), None);
    assert_eq!(target(&edges, "App.Clock.run", "$this.now"), Some("App.Clock.now"));
    assert_eq!(target(&edges, "App.Clock.run", "self.make"), Some("App.Clock.make"));
    assert_eq!(target(&edges, "App.Clock.run", "Clock.make"), Some("App.Clock.make"));
    assert_eq!(target(&edges, "App.Web.main", "$clock.now"), Some("App.Clock.now"));
    assert_eq!(target(&edges, "App.Web.main", "Clock.make"), Some("App.Clock.make"));
}

#[test]
fn ruby_library_constants_stay_external() {
    let clock = r#"class Clock
  def now
    Time.now
  end

  def parse(text)
    JSON.parse(text)
  end

  def read(path)
    File.read(path)
  end

  def run
    self.now
    now()
    Clock.make
  end

  def self.make
    Clock.new
  end
end
"#;
    let app = r#"require_relative "clock"

def main(clock)
  clock.parse("x")
  Clock.make
  Time.now
end
"#;
    let edges = calls(&[("lib/clock.rb", clock), ("lib/app.rb", app)]);
    assert_eq!(target(&edges, "Clock.now", "Time.now"), None, "{edges:#?}");
    assert_eq!(target(&edges, "Clock.parse", "JSON.parse"), None);
    assert_eq!(target(&edges, "main", "Time.now"), None);
    assert_eq!(target(&edges, "Clock.run", "self.now"), Some("Clock.now"));
    assert_eq!(target(&edges, "Clock.run", "now"), Some("Clock.now"), "{edges:#?}");
    assert_eq!(target(&edges, "Clock.run", "Clock.make"), Some("Clock.make"));
    assert_eq!(target(&edges, "main", "clock.parse"), Some("Clock.parse"));
    assert_eq!(target(&edges, "main", "Clock.make"), Some("Clock.make"));
}

#[test]
fn cpp_std_calls_stay_external() {
    let util = r#"#include <algorithm>

namespace shop {

class Util {
public:
    int max(int a, int b) {
        return std::max(a, b);
    }
    static Util make() {
        return Util();
    }
    void run() {
        this->max(1, 2);
        max(1, 2);
        Util::make();
    }
};

}
"#;
    let app = r#"#include "util.hpp"

int main() {
    shop::Util u = shop::Util::make();
    u.max(1, 2);
    return std::max(1, 2);
}
"#;
    let edges = calls(&[("src/util.hpp", util), ("src/main.cpp", app)]);
    assert_eq!(target(&edges, "shop.Util.max", "std::max"), None, "{edges:#?}");
    assert_eq!(target(&edges, "main", "std::max"), None);
    assert_eq!(target(&edges, "shop.Util.run", "this->max"), Some("shop.Util.max"));
    assert_eq!(target(&edges, "shop.Util.run", "max"), Some("shop.Util.max"));
    assert_eq!(target(&edges, "shop.Util.run", "Util::make"), Some("shop.Util.make"));
    assert_eq!(target(&edges, "main", "shop::Util::make"), Some("shop.Util.make"));
    assert_eq!(target(&edges, "main", "u.max"), Some("shop.Util.max"));
}
