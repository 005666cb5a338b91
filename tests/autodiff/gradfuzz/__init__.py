"""A property-based gradient fuzzer (issue 9, "the guard"): `program.programs()` is a hypothesis
strategy for random legal kernels (as module source), `check.check()` compares reverse mode with
f64 central differences and with forward mode. Used by tests/autodiff/test_fuzz_gradients.py (a
fixed, derandomized budget) and tools/fuzz_gradients.py (a long campaign)."""
