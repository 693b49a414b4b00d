#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| edgerag_fuzz::chunk_code::check(data));
