fn main() {
    numfuzz_cc::main_with(true)
}
