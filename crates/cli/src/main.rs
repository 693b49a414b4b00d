fn main() {
    eprintln!("edgerag: not implemented yet");
    std::process::exit(2);
}
