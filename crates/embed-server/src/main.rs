//! `edgerag-embed-server [--addr 127.0.0.1:8788] [--model-dir DIR]`
//! (or `EMBED_SERVER_ADDR`, `EDGERAG_MODEL_DIR`). Serves all-MiniLM-L6-v2 over the OpenAI
//! embeddings API until stopped.
use std::process::ExitCode;

use edgerag_embed_server::{default_model_dir, server, MiniLm, DEFAULT_ADDR};

fn main() -> ExitCode {
    let mut addr = std::env::var("EMBED_SERVER_ADDR").unwrap_or_else(|_| DEFAULT_ADDR.to_string());
    let mut model_dir = default_model_dir();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--addr", Some(v)) => addr = v,
            ("--model-dir", Some(v)) => model_dir = v.into(),
            _ => {
                eprintln!("usage: edgerag-embed-server [--addr HOST:PORT] [--model-dir DIR]");
                return ExitCode::from(2);
            }
        }
    }
    let model = match MiniLm::load(&model_dir) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("edgerag-embed-server: {e}");
            return ExitCode::from(1);
        }
    };
    match server::serve(&addr, model) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("edgerag-embed-server: cannot serve on {addr}: {e}");
            ExitCode::from(1)
        }
    }
}
