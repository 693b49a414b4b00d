//! Worked TypeScript examples, as named tests (they fix the default behaviour of the code chunker).
#![allow(clippy::unwrap_used)]
#![cfg(feature = "lang-typescript")]
use edgerag_core::chunk::invariants;
use edgerag_core::{chunk_text, ChunkConfig, ChunkType};

/// A TypeScript class with JSDoc on the class and its methods: one `code-class` chunk, lines 1–20
/// (the closing brace is on line 20).
const USER_SERVICE: &str = r#"/**
 * User management service
 */
export class UserService {
    private users: User[] = [];

    /**
     * Add a new user
     */
    addUser(user: User): void {
        this.users.push(user);
    }

    /**
     * Find user by ID
     */
    findUser(id: string): User | null {
        return this.users.find(u => u.id === id) || null;
    }
}
"#;

/// A class with its JSDoc, then a free function.
const MY_CLASS: &str = r#"/**
 * Sample class
 */
export class MyClass {
    method() {
        return true;
    }
}

function helper() {
    return "helper";
}
"#;

#[test]
fn user_service_is_one_class_chunk_with_its_jsdoc() {
    let config = ChunkConfig::default();
    let chunks = chunk_text("src/user-service.ts", USER_SERVICE, &config);
    invariants::check(USER_SERVICE, &chunks, &config).unwrap();
    assert_eq!(chunks.len(), 1, "{chunks:#?}");
    let class = &chunks[0];
    assert_eq!(class.chunk_type, ChunkType::CodeClass);
    assert_eq!((class.start_line, class.end_line), (1, 20));
    assert_eq!(class.metadata.symbol_name.as_deref(), Some("UserService"));
    assert!(class.text.starts_with("/**\n * User management service"));
    for keyword in ["export", "class", "userservice", "user", "adduser", "finduser"] {
        assert!(class.keywords.iter().any(|k| k == keyword), "{keyword} not in {:?}", class.keywords);
    }
}

#[test]
fn my_class_and_helper_are_two_chunks() {
    let config = ChunkConfig::default();
    let chunks = chunk_text("src/sample.ts", MY_CLASS, &config);
    invariants::check(MY_CLASS, &chunks, &config).unwrap();
    let got: Vec<_> = chunks
        .iter()
        .map(|c| (c.chunk_type, c.metadata.symbol_name.as_deref(), c.start_line, c.end_line))
        .collect();
    assert_eq!(
        got,
        [(ChunkType::CodeClass, Some("MyClass"), 1, 8), (ChunkType::CodeFunction, Some("helper"), 10, 12)]
    );
    assert!(chunks[0].text.starts_with("/**\n * Sample class\n */\nexport class MyClass {"));
}
