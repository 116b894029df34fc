fn main() {
    // Invoked through the `numfuzz-c++` symlink, behave as the C++ driver (as clang does).
    let name = std::env::args().next().unwrap_or_default();
    numfuzz_cc::main_with(name.ends_with("++") || name.ends_with("cxx"))
}
