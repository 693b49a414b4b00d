//! Structured JSON logs (one object per line on the console). Never pass secrets here.

pub fn info(event: &str, fields: &[(&str, &str)]) {
    emit("info", event, fields);
}

pub fn warn(event: &str, fields: &[(&str, &str)]) {
    emit("warn", event, fields);
}

pub fn error(event: &str, fields: &[(&str, &str)]) {
    emit("error", event, fields);
}

fn emit(level: &str, event: &str, fields: &[(&str, &str)]) {
    let mut map = serde_json::Map::new();
    map.insert("level".into(), level.into());
    map.insert("event".into(), event.into());
    for (k, v) in fields {
        map.insert((*k).into(), (*v).into());
    }
    let line = serde_json::Value::Object(map).to_string();
    #[cfg(target_arch = "wasm32")]
    worker::console_log!("{line}");
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("{line}");
}
